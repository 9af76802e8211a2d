import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatClockTime } from './clock-time';
import { purchasesText, type SecondCount } from './purchases-per-second';

/**
 * The purchases-per-second bars themselves: one bar per second, its height the orders counted in it. Bars,
 * not a curve: an interpolated line would draw values between the seconds that no second had. Its own
 * module so recharts is loaded (lazily, by PurchasesPerSecondChart) only when an admin opens a dashboard,
 * not by every shopper's first page.
 */
export default function PurchasesPlot({ seconds }: { seconds: readonly SecondCount[] }) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      {/* No accessibility layer: it would make the SVG focusable, and it is hidden (the caption describes it). */}
      <BarChart
        data={[...seconds]}
        margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
        barCategoryGap={1}
        accessibilityLayer={false}
      >
        <CartesianGrid vertical={false} />
        <XAxis dataKey="at" tickFormatter={(at: number) => formatClockTime(at)} minTickGap={48} />
        <YAxis
          width={48}
          allowDecimals={false}
          label={{ value: 'purchases', angle: -90, position: 'insideLeft', offset: 10 }}
        />
        <Tooltip
          labelFormatter={(at) => `In the second from ${formatClockTime(Number(at))}`}
          formatter={(value) => [purchasesText(Number(value)), 'Made']}
        />
        {/* currentColor: the colour comes from admin.css and its design tokens. */}
        <Bar
          dataKey="purchases"
          fill="currentColor"
          isAnimationActive={false} // new bars every second: animating each one only jitters
        />
      </BarChart>
    </ResponsiveContainer>
  );
}
