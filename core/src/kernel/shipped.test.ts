import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAWGYM_PACKAGES } from './shipped';
import { installCommand } from '../doctor/doctor';

const plugins = join(__dirname, '..', '..', '..', 'plugins');

describe('the packages ClawGym publishes', () => {
  it('are exactly the repository\'s plugin packages', () => {
    const names = readdirSync(plugins).map((d) => (JSON.parse(readFileSync(join(plugins, d, 'package.json'), 'utf8')) as { name: string }).name);
    expect([...CLAWGYM_PACKAGES].sort()).toEqual(names.sort());
  });

  it('are the only ones an install hint names: a provider by the package that provides it, a made-up name by none', () => {
    // `embedded` as a trainer comes from the engine package (there is no @clawgym/trainer-embedded).
    expect(installCommand('embedded', 'trainer')).toBe('npm i -D @clawgym/engine-embedded');
    expect(installCommand('embedded', 'engine')).toBe('npm i -D @clawgym/engine-embedded');
    expect(installCommand('sglang', 'engine')).toBe('npm i -D @clawgym/engine-vllm');
    expect(installCommand('grpo', 'algorithm')).toBe('npm i -D @clawgym/algo-grpo');
    expect(installCommand('claude-code', 'harness')).toBe('npm i -D @clawgym/harness-claude-code');
    expect(installCommand('nope', 'algorithm')).toBeUndefined();
    expect(installCommand('@acme/x', 'harness')).toBeUndefined();
    expect(installCommand('./local-plugin.js', 'harness')).toBeUndefined();
  });
});
