/** A section that has no page yet. */
export function Placeholder({ title }: { title: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      <p class="hint">This part of the console is not built yet; the API has it (see /docs).</p>
    </section>
  );
}
