const words = input.text.split(/\s+/).filter((word: string) => word.length > 0);
const longest = words.reduce((best: string, word: string) => (word.length > best.length ? word : best), '');
console.info(`textStats: ${words.length} words`);
return { words: words.length, characters: input.text.length, longest };
