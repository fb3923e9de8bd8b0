import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { chartInstant, chartTick } from './format.ts';

/**
 * A time-series chart drawn by uPlot (a canvas: the page puts the same figures in a table beside
 * it for screen readers). `x` are instants; each line has one value per instant; guard lines are
 * drawn dashed, as constant series.
 */
export interface ChartLine {
  label: string;
  values: readonly number[];
}

export interface GuardLine {
  label: string;
  value: number;
}

const palette = ['#2b6cb0', '#2f855a', '#c05621', '#6b46c1', '#b83280', '#2c7a7b', '#975a16', '#4a5568'];

export function TimeChart({
  title,
  at,
  lines,
  guards = [],
  format = (value) => String(value),
}: {
  title: string;
  at: readonly string[];
  lines: readonly ChartLine[];
  guards?: readonly GuardLine[];
  format?: (value: number) => string;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (element === null) return;
    const x = at.map((instant) => Date.parse(instant) / 1000);
    const data: uPlot.AlignedData = [
      x,
      ...lines.map((line) => [...line.values]),
      ...guards.map((guard) => x.map(() => guard.value)),
    ];
    const chart = new uPlot(
      {
        width: Math.max(element.clientWidth, 320),
        height: 220,
        series: [
          { value: (_: uPlot, value: number | null) => (value === null ? '—' : chartInstant(value)) },
          ...lines.map((line, index) => ({
            label: line.label,
            stroke: palette[index % palette.length],
            width: 2,
            value: (_: uPlot, value: number | null) => (value === null ? '—' : format(value)),
          })),
          ...guards.map((guard, index) => ({
            label: guard.label,
            stroke: index === 0 ? '#d69e2e' : '#c53030',
            dash: [6, 4],
            width: 1.5,
            points: { show: false },
            value: () => format(guard.value),
          })),
        ],
        axes: [
          { values: (_: uPlot, ticks: number[]) => ticks.map(chartTick) },
          { values: (_: uPlot, ticks: number[]) => ticks.map(format), size: 64 },
        ],
        scales: { y: { range: (_: uPlot, min: number, max: number) => [0, Math.max(max, min, 1e-9) * 1.1] } },
      },
      data,
      element,
    );
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(element.clientWidth, 320), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [at, lines, guards, format]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} role="img" aria-label={`${title} (the figures are in the table below)`} />
    </figure>
  );
}
