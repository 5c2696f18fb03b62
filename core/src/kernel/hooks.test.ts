import { HOOK_NAMES, type HookName } from '../contracts/hooks';
import { createHooks } from './hooks';

describe('hook map', () => {
  it('lists exactly the hooks of the typed map, in order', () => {
    expect([...HOOK_NAMES]).toEqual(Object.keys(createHooks()));
  });

  it('has the four hooks of the design; computeAdvantage reshapes the selected algorithm\'s result (the registry dispatches)', () => {
    const hooks = createHooks();
    expect(hooks.beforeRollout.constructor.name).toBe('AsyncSeriesWaterfallHook');
    expect(hooks.onModelCall.constructor.name).toBe('AsyncSeriesHook');
    expect(hooks.onTreeBuilt.constructor.name).toBe('AsyncSeriesWaterfallHook');
    expect(hooks.computeAdvantage.constructor.name).toBe('AsyncSeriesWaterfallHook');
  });

  it('is frozen', () => {
    const hooks = createHooks() as Record<string, unknown>;
    expect(Object.isFrozen(hooks)).toBe(true);
    expect(() => { hooks.extra = 1; }).toThrow(TypeError);
  });

  it('types the name list against the map (compile-time check)', () => {
    // If HOOK_NAMES and HookMap drift apart, `npm run typecheck` fails on hooks.ts and here.
    const everyName: Record<HookName, true> = {
      runStart: true, stepStart: true, beforeRollout: true, onModelCall: true, afterRollout: true,
      onTreeBuilt: true, computeAdvantage: true, stepEnd: true, runEnd: true,
    };
    expect(Object.keys(everyName).sort()).toEqual([...HOOK_NAMES].sort());
  });
});
