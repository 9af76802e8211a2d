import { Bar, BarChart, LabelList, Rectangle, ResponsiveContainer, XAxis, YAxis } from 'recharts';
import type { FunnelStep } from './sale-funnel';

/** Height of one step's bar, and of the room around them. */
const ROW_PX = 40;
const FRAME_PX = 16;

/**
 * The funnel's bars, lying down, each step's name beside it and its count at its end: the counts are
 * what matters, so they are written rather than read off an axis. Its own module so recharts loads
 * (lazily, by SaleFunnelChart) only on an admin's dashboard.
 */
export default function FunnelPlot({ steps }: { steps: readonly FunnelStep[] }) {
  return (
    <ResponsiveContainer width="100%" height={FRAME_PX + ROW_PX * steps.length}>
      {/* No accessibility layer: it would make the SVG focusable, and it is hidden (the caption lists the steps). */}
      <BarChart
        data={[...steps]}
        layout="vertical"
        margin={{ top: 8, right: 64, bottom: 8, left: 0 }}
        barCategoryGap={6}
        accessibilityLayer={false}
      >
        {/* At least 1: a funnel of zeros still has an axis to draw its empty bars on. */}
        <XAxis type="number" hide domain={[0, (dataMax: number) => Math.max(1, dataMax)]} />
        <YAxis type="category" dataKey="label" width="auto" interval={0} tickLine={false} />
        {/* A shape of its own: recharts then keeps a step of 0 among its bars, and so writes its count. */}
        <Bar dataKey="count" fill="currentColor" shape={<Rectangle />} isAnimationActive={false}>
          <LabelList
            dataKey="count"
            position="right"
            className="funnel-chart__count"
            formatter={(count) => Number(count).toLocaleString('en-US')}
          />
        </Bar>
      </BarChart>
    </ResponsiveContainer>
  );
}
