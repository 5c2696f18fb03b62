/**
 * The class of an infrastructure failure, from the runner's message (each of its failures
 * starts with a fixed phrase). The report counts failures by class, so that a run losing
 * rollouts to its sandboxes is told apart from one losing them to the engine.
 */
const CLASSES: readonly [RegExp, string][] = [
  [/^sandbox creation failed/, 'sandbox'],
  [/^task setup failed/, 'task-setup'],
  [/^harness could not be started/, 'harness-start'],
  [/^engine or proxy failed/, 'engine'],
  [/^the harness failed \(exit /, 'proxy-refused'], // … after the proxy refused its request
  [/^missing records/, 'missing-records'],
  [/^workspace sync failed/, 'workspace-sync'],
  [/^verifier failed/, 'verifier'],
  [/^cancelled/, 'cancelled'],
  [/^runner failure/, 'runner'],
];

export function infraClassOf(details: string): string {
  for (const [re, name] of CLASSES) if (re.test(details)) return name;
  // A phrase this list does not know yet: its first words, so it still groups.
  return details.split(/[:(]/)[0]!.trim().toLowerCase().replace(/\s+/g, '-').slice(0, 40) || 'unknown';
}
