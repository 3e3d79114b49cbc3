import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { arch, availableParallelism, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO_ROOT } from '../support/daemon-process.js';
import { readRows, renderReport, renderTable } from './report.js';

/**
 * The resilience suite's global setup: one seed and one results directory for the run; at the end
 * the scenarios' rows become the Markdown table printed here and RESILIENCE.md at the repo root.
 */
export default function setup(project: TestProject): () => void {
  const started = Date.now();
  const fromEnv = Number(process.env.RESILIENCE_SEED);
  const seed = Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 1 + (started % 1_000_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'fleetwatch-resilience-'));
  project.provide('resilienceDir', dir);
  project.provide('resilienceSeed', seed);

  return () => {
    const rows = readRows(dir);
    rmSync(dir, { recursive: true, force: true });
    if (rows.length === 0) return;
    const report = renderReport(rows, {
      seed,
      durationMs: Date.now() - started,
      node: process.version,
      cores: availableParallelism(),
      platform: `${platform()} ${arch()}`,
      date: new Date(started).toISOString(),
    });
    writeFileSync(join(REPO_ROOT, 'RESILIENCE.md'), report);
    console.log(`\nResilience (seed ${seed}):\n\n${renderTable(rows)}\n\nWritten to RESILIENCE.md\n`);
  };
}
