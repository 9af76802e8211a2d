import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { DemoStrategyResult } from '@flash-sale/contract';

/**
 * Accepted units against the stock and oversold units, one group of bars per strategy. Its own module
 * so recharts loads only on the demo page; the table beside it carries the same numbers as text.
 */
export default function DemoPlot({ results, stock }: { results: readonly DemoStrategyResult[]; stock: number }) {
  const data = results.map((result) => ({
    strategy: result.strategy,
    accepted: result.accepted,
    oversold: result.oversold ?? 0,
    stock,
  }));
  return (
    <ResponsiveContainer width="100%" height="100%">
      <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
        <CartesianGrid vertical={false} />
        <XAxis dataKey="strategy" interval={0} tick={{ fontSize: 11 }} />
        <YAxis width={48} allowDecimals={false} />
        <Tooltip />
        <Legend />
        <Bar dataKey="stock" name="stock" fill="#9ca3af" isAnimationActive={false} />
        <Bar dataKey="accepted" name="promised (accepted)" fill="#1d4ed8" isAnimationActive={false} />
        <Bar dataKey="oversold" name="oversold" fill="#b91c1c" isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}
