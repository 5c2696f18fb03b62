import type { HookMap, HookName, PluginHook, PluginHooks, TapOptions } from '../contracts/hooks';
import { HookError, HookTimeoutError } from './hook-errors';

type AnyFn = (...args: any[]) => any;

/** How long an async tap may stay pending, per hook. */
export interface HookTimeouts {
  defaultMs: number;
  perHook?: Partial<Record<HookName, number>>;
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    timer.unref?.();
    promise.then(
      (v) => { clearTimeout(timer); resolve(v); },
      (e) => { clearTimeout(timer); reject(e); },
    );
  });
}

/** Build the hook view handed to one plugin's `apply`. */
export function scopeHooks(hooks: HookMap, plugin: string, timeouts: HookTimeouts): PluginHooks {
  const scoped = {} as Record<HookName, PluginHook<unknown>>;
  for (const hookName of Object.keys(hooks) as HookName[]) {
    const hook = hooks[hookName] as unknown as {
      tap(opts: object, fn: AnyFn): void;
      tapPromise(opts: object, fn: AnyFn): void;
    };
    const ms = timeouts.perHook?.[hookName] ?? timeouts.defaultMs;
    const tapOpts = (o?: TapOptions) => ({ ...o, name: plugin });
    scoped[hookName] = Object.freeze({
      tap(options: TapOptions | undefined, fn: AnyFn) {
        hook.tap(tapOpts(options), (...args: unknown[]) => {
          try {
            return fn(...args);
          } catch (err) {
            throw err instanceof HookError ? err : new HookError(plugin, hookName, err);
          }
        });
      },
      tapPromise(options: TapOptions | undefined, fn: AnyFn) {
        hook.tapPromise(tapOpts(options), async (...args: unknown[]) => {
          try {
            const pending = Promise.resolve().then(() => fn(...args));
            return await withTimeout(pending, ms, () => new HookTimeoutError(plugin, hookName, ms));
          } catch (err) {
            if (err instanceof HookError || err instanceof HookTimeoutError) throw err;
            throw new HookError(plugin, hookName, err);
          }
        });
      },
    });
  }
  return Object.freeze(scoped) as unknown as PluginHooks;
}
