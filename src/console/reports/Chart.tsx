import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ReportPoint } from '../../../packages/client/src/index';

const dayLabel = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });

/**
 * One figure over time, drawn by uPlot into a canvas (bundled with the console: no script from
 * elsewhere; it styles its elements through the CSSOM, which the console's CSP allows, and its
 * stylesheet is part of the console's own). A canvas says nothing to a screen reader: the
 * page shows the same points as a table beside it.
 */
export function Chart({ points, label, format }: { points: ReportPoint[]; label: string; format: (v: number | null) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [points.map((p) => Date.parse(p.start) / 1000), points.map((p) => p.value)];
    const accent = getComputedStyle(el).getPropertyValue('--accent').trim() || '#1f5fd1';
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 280),
        height: 240,
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          { values: (_u, ticks) => ticks.map((t) => dayLabel.format(new Date(t * 1000))), stroke: '#5a6372', grid: { stroke: '#eef0f3' } },
          { values: (_u, ticks) => ticks.map((t) => format(t)), stroke: '#5a6372', grid: { stroke: '#eef0f3' }, size: 64 },
        ],
        series: [{}, { label, stroke: accent, width: 2, fill: `${accent}1f`, spanGaps: false, points: { show: points.length <= 31 } }],
      },
      data,
      el,
    );
    // The chart follows its box's width (a narrow window, the sidebar of a wide one).
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 280), height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [points, label]);
  return <div ref={box} class="report-chart" aria-hidden="true" />;
}
