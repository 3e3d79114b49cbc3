import './virtual-rows.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A table of any length that keeps only the rows in view (and a few either side) in the DOM: each
 * row has the same height, so the row at a scroll position is a division, and the rows are placed
 * absolutely inside a body as tall as all of them. 40,000 rows cost as much as 30.
 *
 * It is a table (header cells `th`, cells `td`) with `aria-rowcount` and each row's
 * `aria-rowindex`, so assistive technology knows the whole length; the header stays in view
 * (sticky). The columns are a CSS grid template shared by the header and the rows.
 */
export interface VirtualRowsProps<T> {
  /** The table's accessible name. */
  label: string;
  items: readonly T[];
  /** Pixels; every row is this tall (the page's stylesheet must not make it taller). */
  rowHeight: number;
  /** A `grid-template-columns` value, shared by the header and the rows. */
  columns: string;
  /** The header's cells (`th` elements). */
  header: ComponentChildren;
  /** The cells of one row (`td` elements). */
  row: (item: T, index: number) => ComponentChildren;
  rowKey: (item: T) => string;
  /** The viewport's height (a CSS length); default: most of the window. */
  height?: string;
  /** Rows rendered beyond each edge of the view. */
  overscan?: number;
  class?: string;
}

export function VirtualRows<T>(props: VirtualRowsProps<T>) {
  const { items, rowHeight, overscan = 10 } = props;
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewHeight, setViewHeight] = useState(600);
  const frame = useRef<number | undefined>(undefined);

  useLayoutEffect(() => {
    const element = viewport.current;
    if (!element) return;
    setViewHeight(element.clientHeight);
    const observer = new ResizeObserver(() => setViewHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => () => cancelAnimationFrame(frame.current ?? 0), []);

  // A shorter list (a filter) may leave the scroll position past its end: the browser clamps it.
  const total = items.length * rowHeight;
  const top = Math.min(scrollTop, Math.max(0, total - viewHeight));
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(items.length, Math.ceil((top + viewHeight) / rowHeight) + overscan);
  const visible = items.slice(first, last);

  return (
    <div
      ref={viewport}
      class={`vrows ${props.class ?? ''}`}
      style={{ height: props.height ?? 'calc(100vh - 230px)' }}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the scrolling area takes the keyboard (arrows, Page Down)
      tabIndex={0}
      onScroll={(event) => {
        const position = (event.currentTarget as HTMLDivElement).scrollTop;
        cancelAnimationFrame(frame.current ?? 0);
        frame.current = requestAnimationFrame(() => setScrollTop(position));
      }}
    >
      <table aria-label={props.label} aria-rowcount={items.length + 1}>
        <thead>
          <tr aria-rowindex={1} style={{ gridTemplateColumns: props.columns }}>
            {props.header}
          </tr>
        </thead>
        <tbody style={{ height: `${total}px` }}>
          {visible.map((item, offset) => {
            const index = first + offset;
            return (
              <tr
                key={props.rowKey(item)}
                aria-rowindex={index + 2}
                style={{
                  gridTemplateColumns: props.columns,
                  height: `${rowHeight}px`,
                  transform: `translateY(${index * rowHeight}px)`,
                }}
              >
                {props.row(item, index)}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
