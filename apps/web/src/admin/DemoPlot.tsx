import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { DemoStrategyResult } from '@flash-sale/contract';

/** Height of one strategy's group of bars, and of the axis and legend around them. */
const ROW_PX = 56;
const FRAME_PX = 72;

/**
 * Accepted units against the stock and oversold units, one group of bars per strategy. The bars lie
 * down, strategy names on the vertical axis: a name gets a line of its own however narrow the
 * screen, where names under upright bars collide on a phone. Its own module so recharts loads only on
 * the demo page; the table beside it carries the same numbers as text.
 */
export default function DemoPlot({ results, stock }: { results: readonly DemoStrategyResult[]; stock: number }) {
  const data = results.map((result) => ({
    strategy: result.strategy,
    accepted: result.accepted,
    oversold: result.oversold ?? 0,
    stock,
  }));
  return (
    <ResponsiveContainer width="100%" height={FRAME_PX + ROW_PX * data.length}>
      <BarChart
        data={data}
        layout="vertical"
        margin={{ top: 8, right: 16, bottom: 0, left: 0 }}
        accessibilityLayer={false}
      >
        <CartesianGrid horizontal={false} />
        <XAxis type="number" allowDecimals={false} />
        {/* As wide as the longest name (recharts measures them): a fixed width cut "redis-lock-unfenced". */}
        <YAxis type="category" dataKey="strategy" width="auto" interval={0} tick={{ fontSize: 12 }} />
        <Tooltip />
        <Legend />
        <Bar dataKey="stock" name="stock" fill="#9ca3af" isAnimationActive={false} />
        <Bar dataKey="accepted" name="promised (accepted)" fill="#1d4ed8" isAnimationActive={false} />
        <Bar dataKey="oversold" name="oversold" fill="#b91c1c" isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}
