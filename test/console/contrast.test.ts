import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * The console's two themes keep text readable: every colour the stylesheet uses for text has a
 * contrast ratio of at least 4.5:1 (WCAG 2 AA) against each background it is shown on, computed
 * from the theme's custom properties in console/src/app.css.
 */

const css = readFileSync(new URL('../../console/src/app.css', import.meta.url), 'utf8');

function theme(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`app.css has no "${selector}" block`);
  const body = css.slice(start, css.indexOf('}', start));
  return Object.fromEntries(
    [...body.matchAll(/--([\w-]+):\s*(#[0-9a-fA-F]{6})\s*;/g)].map((m) => [m[1], m[2]]),
  );
}

/** Relative luminance of an sRGB colour (WCAG 2). */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.03928 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** Text colour → the backgrounds it is shown on (tables and pages on `bg`, the header and forms on `panel`). */
const PAIRS: [string, string[]][] = [
  ['fg', ['bg', 'panel']],
  ['muted', ['bg', 'panel']],
  ['accent', ['bg', 'panel']],
  ['critical', ['bg', 'panel']],
  ['warning', ['bg', 'panel']],
  ['info', ['bg', 'panel']],
  ['ok', ['bg', 'panel']],
  // Primary and danger buttons: the page's background colour as text on the accent / critical fill.
  ['bg', ['accent', 'critical']],
];

describe('the console themes', () => {
  it('computes contrast as WCAG does', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  for (const selector of [':root', ':root[data-theme="dark"]']) {
    it(`${selector}: every text colour is at least 4.5:1 against its backgrounds`, () => {
      const colours = theme(selector);
      const low: string[] = [];
      for (const [text, backgrounds] of PAIRS) {
        for (const background of backgrounds) {
          const [fg, bg] = [colours[text], colours[background]];
          if (!fg || !bg) throw new Error(`${selector} lacks --${fg ? background : text}`);
          const ratio = contrast(fg, bg);
          if (ratio < 4.5) low.push(`--${text} on --${background}: ${ratio.toFixed(2)}:1`);
        }
      }
      expect(low).toEqual([]);
    });
  }
});
