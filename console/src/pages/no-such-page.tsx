import { href } from '../lib/router.js';
import type { PageEntry } from './index.js';

/**
 * A hash that names no page (a mistyped or outdated link): said so, with the sections to go to,
 * rather than another page under a title that is not what was asked for.
 */
export function NoSuchPage({ page, sections }: { page: string; sections: readonly PageEntry[] }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">No such page</h1>
      <p>
        The console has no page <code>#/{page}</code>. Go to:
      </p>
      <ul>
        {sections.map((section) => (
          <li key={section.page}>
            <a href={href(section.page)}>{section.nav}</a>
          </li>
        ))}
      </ul>
    </section>
  );
}
