/**
 * Append every element of `items` to `target`. `target.push(...items)` passes each element as a
 * call argument, so an array past roughly 120k elements (a 130 kB tool result in byte ids)
 * overflows the stack; a loop has no such limit.
 */
export function appendAll<T>(target: T[], items: ArrayLike<T>): T[] {
  for (let i = 0; i < items.length; i++) target.push(items[i]!);
  return target;
}
