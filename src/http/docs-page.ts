import { escapeHtml } from '../lib/text.js';
import type { OpenApiDocument } from './openapi.js';

/**
 * `/docs`: the OpenAPI document as one self-contained HTML page (no script, no asset fetched from
 * anywhere: it must open where no CDN can be reached). Operations are grouped by tag, each with
 * its access, parameters, request body schema and answers; `/openapi.json` is the document itself.
 */

type Json = Record<string, unknown>;

/** Markdown's inline code and bold, the only markup the descriptions use; the rest is text. */
function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

function paragraphs(text: unknown): string {
  if (typeof text !== 'string' || text.trim() === '') return '';
  return text
    .split(/\n\s*\n/)
    .map((part) => `<p>${inline(part.replace(/\s*\n\s*/g, ' '))}</p>`)
    .join('');
}

function schemaBlock(schema: unknown): string {
  return `<details><summary>schema</summary><pre>${escapeHtml(JSON.stringify(schema, null, 2))}</pre></details>`;
}

function parametersTable(parameters: Json[]): string {
  if (parameters.length === 0) return '';
  const rows = parameters.map((param) => {
    const schema = (param['schema'] ?? {}) as Json;
    const type =
      typeof schema['type'] === 'string'
        ? schema['type']
        : Array.isArray(schema['type'])
          ? schema['type'].join(' | ')
          : '';
    return `<tr><td><code>${escapeHtml(String(param['name']))}</code></td><td>${escapeHtml(String(param['in']))}</td><td>${param['required'] ? 'yes' : 'no'}</td><td>${escapeHtml(type)}</td><td>${inline(String(param['description'] ?? schema['description'] ?? ''))}</td></tr>`;
  });
  return `<table><thead><tr><th>parameter</th><th>in</th><th>required</th><th>type</th><th>meaning</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function responsesList(responses: Json): string {
  const items = Object.entries(responses).map(([status, value]) => {
    const response = value as Json;
    const content = (response['content'] ?? {}) as Record<string, Json>;
    const [type, media] = Object.entries(content)[0] ?? [];
    const schema = media?.['schema'];
    const shown = schema && Object.keys(schema).length > 0 ? schemaBlock(schema) : '';
    return `<li><strong>${escapeHtml(status)}</strong> ${inline(String(response['description'] ?? ''))}${type ? ` <small>${escapeHtml(type)}</small>` : ''}${shown}</li>`;
  });
  return `<ul class="answers">${items.join('')}</ul>`;
}

function operationSection(method: string, path: string, operation: Json): string {
  const id = String(operation['operationId'] ?? `${method}-${path}`);
  const flags = [
    `<span class="access">${escapeHtml(String(operation['x-access'] ?? ''))}</span>`,
    operation['x-destructive'] === true ? '<span class="destructive">destructive</span>' : '',
  ].join(' ');
  const body = operation['requestBody'] as Json | undefined;
  const bodySchema = body
    ? ((body['content'] as Record<string, Json>)['application/json']?.['schema'] as unknown)
    : undefined;
  return `<section class="operation" id="${escapeHtml(id)}">
<h3><span class="method ${escapeHtml(method)}">${escapeHtml(method.toUpperCase())}</span> <code>${escapeHtml(path)}</code> ${flags}</h3>
<p class="summary">${inline(String(operation['summary'] ?? ''))}</p>
${paragraphs(operation['description'])}
${parametersTable((operation['parameters'] ?? []) as Json[])}
${body ? `<h4>Body${body['required'] ? ' (required)' : ' (optional)'}</h4>${schemaBlock(bodySchema)}` : ''}
<h4>Answers</h4>${responsesList((operation['responses'] ?? {}) as Json)}
</section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 2rem;color:#1d232a}
code,pre{font-family:ui-monospace,monospace;font-size:13px}pre{background:#f4f5f7;padding:.6rem;overflow:auto;max-height:30rem}
h2{border-bottom:2px solid #ccd;margin-top:2.5rem}.operation{border:1px solid #dde;border-radius:6px;padding:.2rem 1rem;margin:1rem 0}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;padding:0 .4rem;font-size:13px}
.get{background:#2b7bb9}.post{background:#2f9e44}.put{background:#e67700}.patch{background:#ae3ec9}.delete{background:#c92a2a}
.access{font-size:12px;color:#555;border:1px solid #bbb;border-radius:4px;padding:0 .3rem}.destructive{font-size:12px;color:#fff;background:#c92a2a;border-radius:4px;padding:0 .3rem}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #dde;padding:.2rem .5rem;text-align:left;vertical-align:top}
nav ul{columns:2}.summary{font-weight:600}`;

/** The whole page for `document`. */
export function renderDocsPage(document: OpenApiDocument): string {
  const info = (document['info'] ?? {}) as Json;
  const paths = (document['paths'] ?? {}) as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const tag of (document['tags'] ?? []) as Json[]) byTag.set(String(tag['name']), []);
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const tag = String(((operation['tags'] ?? []) as string[])[0] ?? 'Other');
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(operationSection(method, path, operation));
    }
  }
  const anchor = (tag: string) => `tag-${tag.replace(/[^A-Za-z0-9]+/g, '-')}`;
  const nav = [...byTag.keys()]
    .map((tag) => `<li><a href="#${anchor(tag)}">${escapeHtml(tag)}</a></li>`)
    .join('');
  const sections = [...byTag]
    .map(([tag, operations]) => `<h2 id="${anchor(tag)}">${escapeHtml(tag)}</h2>${operations.join('\n')}`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(String(info['title'] ?? 'API'))}</title><style>${STYLE}</style></head>
<body><h1>${escapeHtml(String(info['title'] ?? 'API'))} <small>${escapeHtml(String(info['version'] ?? ''))}</small></h1>
${paragraphs(info['description'])}
<p>The machine-readable document: <a href="openapi.json"><code>/openapi.json</code></a> (OpenAPI ${escapeHtml(String(document['openapi']))}).</p>
<nav><ul>${nav}</ul></nav>
${sections}
</body></html>
`;
}
