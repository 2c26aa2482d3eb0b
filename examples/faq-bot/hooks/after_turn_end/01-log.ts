// event.kb: the knowledge bases this turn's knowledge card queried, and the passages it consulted.
const kb = event.kb as { included: { name: string }[]; results: { score: number; file: { key: string } }[] };
if (kb.included.length > 0) {
  const best = kb.results[0];
  console.info(
    `asked ${kb.included.map((k) => k.name).join(', ')}: ${kb.results.length} passages` +
      (best ? `, best ${best.file.key} (${best.score.toFixed(2)})` : ''),
  );
}
