// A channel's schedule as a timeline: one bar per listing across the shown window, with hour ticks and a "now" line.
// Positions are set through element.style (CSSOM), which the console's CSP allows; no style attribute is written.
import type { Listing } from '../types';

const hhmm = (sec: number): string => new Date(sec * 1000).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
const dayLabel = (sec: number): string => new Date(sec * 1000).toLocaleDateString([], { weekday: 'short', day: 'numeric', month: 'short' });

export function Timeline(props: { listings: Listing[]; from: number; to: number; now: number }) {
  const span = props.to - props.from;
  const pct = (sec: number) => `${(Math.min(Math.max(sec, props.from), props.to) - props.from) / span * 100}%`;
  const tickEvery = span <= 86_400 ? 3 * 3600 : span <= 2 * 86_400 ? 6 * 3600 : 86_400;
  const ticks: number[] = [];
  for (let t = Math.ceil(props.from / tickEvery) * tickEvery; t < props.to; t += tickEvery) ticks.push(t);
  // Day starts are labelled with the date; the hours between are dropped on a phone.
  const major = (t: number) => tickEvery >= 86_400 || new Date(t * 1000).getHours() === 0;
  const shown = props.listings.filter((l) => l.end > props.from && l.start < props.to);
  return (
    <figure class="timeline" aria-label="Schedule timeline">
      <div class="timeline-track">
        {ticks.map((t) => (
          <span key={t} class={`timeline-tick${major(t) ? '' : ' minor'}`} ref={(el) => { if (el) el.style.left = pct(t); }}>
            {major(t) ? dayLabel(t) : hhmm(t)}
          </span>
        ))}
        <ul class="timeline-slots">
          {shown.map((l) => (
            <li
              key={l.guid}
              class="timeline-slot"
              data-listing={l.title}
              aria-label={`${l.title}, ${hhmm(l.start)} to ${hhmm(l.end)}`}
              title={`${l.title} ${hhmm(l.start)}–${hhmm(l.end)}`}
              ref={(el) => {
                if (!el) return;
                el.style.left = pct(l.start);
                el.style.width = `calc(${pct(l.end)} - ${pct(l.start)})`;
                el.style.background = l.color || '';
              }}
            >
              <span>{l.title}</span>
            </li>
          ))}
        </ul>
        {props.now >= props.from && props.now < props.to ? <span class="timeline-now" aria-hidden="true" ref={(el) => { if (el) el.style.left = pct(props.now); }} /> : null}
      </div>
      {shown.length === 0 ? <figcaption class="muted">Nothing scheduled in this window.</figcaption> : null}
    </figure>
  );
}
