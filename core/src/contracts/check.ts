/**
 * What a provider says about itself on this machine, for `clawgym doctor`: whether it can run,
 * what it found or what is missing, and the command that installs what is missing.
 */
export interface ProviderCheck {
  ok: boolean;
  /** What was found (when ok) or what is missing and why it matters (when not). */
  reason?: string;
  /** The command that installs what is missing, e.g. `apt-get install -y bubblewrap`. */
  install?: string;
}
