import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { formatClockTime } from './clock-time';
import type { LivePoint } from './live-series';

/** One line of a live chart: which reading it draws, its name, and dashed to tell it from a solid one. */
export interface SeriesLine {
  reading: Exclude<keyof LivePoint, 'at'>;
  name: string;
  dashed?: boolean;
}

/**
 * A live chart's lines, one point per sample on a time axis. Straight segments between samples, and a
 * gap where a sample had no reading: nothing is drawn that was not measured. Its own module so recharts
 * loads (lazily, by LiveSeriesCharts) only on an admin's dashboard.
 */
export default function SeriesPlot({
  points,
  lines,
  unit,
  wholeNumbers,
}: {
  points: readonly LivePoint[];
  lines: readonly SeriesLine[];
  unit: string;
  wholeNumbers: boolean;
}) {
  return (
    <ResponsiveContainer width="100%" height="100%">
      {/* No accessibility layer: it would make the SVG focusable, and it is hidden (the caption says the latest). */}
      <LineChart data={[...points]} margin={{ top: 8, right: 8, bottom: 0, left: 0 }} accessibilityLayer={false}>
        <CartesianGrid vertical={false} />
        <XAxis
          dataKey="at"
          type="number"
          scale="time"
          domain={['dataMin', 'dataMax']}
          tickFormatter={(at: number) => formatClockTime(at)}
          minTickGap={48}
        />
        <YAxis width={48} allowDecimals={!wholeNumbers} label={{ value: unit, angle: -90, position: 'insideLeft' }} />
        <Tooltip labelFormatter={(at) => formatClockTime(Number(at))} />
        {lines.length > 1 && <Legend />}
        {lines.map((line) => (
          // currentColor: the colour comes from admin.css and its design tokens.
          <Line
            key={line.reading}
            dataKey={line.reading}
            name={line.name}
            type="linear"
            stroke="currentColor"
            strokeWidth={2}
            strokeDasharray={line.dashed ? '5 4' : undefined}
            dot={false}
            isAnimationActive={false} // a new point every second: animating each one only jitters
          />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
}
