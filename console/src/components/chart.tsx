// A uPlot chart sized to its container. x values are epoch seconds (uPlot's time axis), or, with `labels`, one
// category per value (statistics periods: a bar per period, however few there are).
import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
}

const COLOURS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7e8c', '#57606a'];

export function Chart(props: { title: string; x: number[]; series: ChartSeries[]; unit?: string; bars?: boolean; labels?: string[] }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let plot: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let alive = true;
    // uPlot is loaded with the first chart (its own chunk).
    void import('uplot').then(({ default: UPlot }) => {
      if (!alive) return;
      const width = () => Math.max(240, el.clientWidth);
      const options: uPlot.Options = {
        title: props.title,
        width: width(),
        height: 220,
        series: [
          {},
          ...props.series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            // Bars for one series; several (per region) would hide each other, so they are lines with points.
            ...(props.bars && props.series.length === 1 ? { paths: UPlot.paths.bars?.({ size: [0.6, 40] }), fill: `${COLOURS[i % COLOURS.length]}55` } : { points: { show: true, size: 6 } }),
          })),
        ],
        axes: [{}, { label: props.unit ?? '' }],
      };
      const labels = props.labels;
      let x = props.x;
      if (labels) {
        x = labels.map((_, i) => i);
        options.scales = { x: { time: false, range: [-0.5, Math.max(labels.length - 0.5, 0.5)] } };
        options.axes = [
          {
            // One label per ~90 px, so hourly periods do not print over each other.
            splits: () => {
              const step = Math.max(1, Math.ceil(labels.length / Math.max(1, Math.floor(width() / 90))));
              return x.filter((i) => i % step === 0);
            },
            values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
          },
          { label: props.unit ?? '' },
        ];
      }
      const made = new UPlot(options, [x, ...props.series.map((s) => s.values)], el);
      plot = made;
      observer = new ResizeObserver(() => made.setSize({ width: width(), height: 220 }));
      observer.observe(el);
    });
    return () => {
      alive = false;
      observer?.disconnect();
      plot?.destroy();
    };
  }, [props.title, props.x, props.series, props.unit, props.bars, props.labels]);
  return <figure class="chart" ref={box} aria-label={props.title} />;
}
