import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatClockTime } from './clock-time';
import { formatRate, type RatePoint } from './purchase-rate';

/**
 * The purchases-per-second area chart itself. Its own module so recharts is loaded (lazily, by
 * PurchaseRateChart) only when an admin opens a dashboard, not by every shopper's first page.
 */
export default function RatePlot({ points }: { points: readonly RatePoint[] }) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      {/* No accessibility layer: it would make the SVG focusable, and it is hidden (the caption describes it). */}
      <AreaChart data={[...points]} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
        <CartesianGrid vertical={false} />
        <XAxis
          dataKey="at"
          type="number"
          scale="time"
          domain={['dataMin', 'dataMax']}
          tickFormatter={(at: number) => formatClockTime(at)}
          minTickGap={48}
        />
        <YAxis width={48} allowDecimals={false} tickFormatter={(value: number) => formatRate(value)} />
        <Tooltip
          labelFormatter={(at) => formatClockTime(Number(at))}
          formatter={(value) => [`${formatRate(Number(value))} / s`, 'Purchases']}
        />
        {/* currentColor: the colour comes from admin.css and its design tokens. */}
        <Area
          type="monotone"
          dataKey="perSecond"
          stroke="currentColor"
          strokeWidth={2}
          fill="currentColor"
          fillOpacity={0.15}
          isAnimationActive={false} // a new point every second: animating each one only jitters
        />
      </AreaChart>
    </ResponsiveContainer>
  );
}
