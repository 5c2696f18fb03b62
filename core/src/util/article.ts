/** `word` with its indefinite article, for messages: "an engine", "a harness", "an openai-chat". */
export const withArticle = (word: string): string => `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
