import { ClawGymError, ErrorCodes, type PublishedWeights } from '@clawgym/core';
import type { Replica, ReplicaSet } from '../replicas';
import { adapterName, sglangCapabilities, sglangLoraSync, sglangSync, vllmFullSync, vllmLoraSync, type ControlCall } from '../weight-sync';
import { errorText } from './sse';

/** What {@link ReplicaWeights} needs of its engine. */
export interface ReplicaWeightsOptions {
  flavor: 'vllm' | 'sglang';
  name: string;
  loraPrefix: string;
  /** Attempts after the first, with doubling backoff from `backoffMs`. */
  retries: number;
  backoffMs: number;
  vllmFullWeights?: 'disk';
  /** The control plane of one replica. */
  control(r: Replica): ControlCall;
  /** Marks a replica down (its sync failed). */
  markDown(r: Replica, why: string): void;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/**
 * The weights each replica serves: loads published weights into every replica (SGLang from disk;
 * vLLM a LoRA adapter or full weights, as `weights.kind` says; see `weight-sync.ts`), retrying
 * with backoff; new calls wait while a sync runs ({@link settled}).
 */
export class ReplicaWeights {
  /** Replicas serving a LoRA adapter: calls name the adapter of the replica's version. */
  private readonly lora = new Set<Replica>();
  private latest: PublishedWeights | undefined;
  private syncing: Promise<void> | undefined;

  constructor(private readonly set: ReplicaSet, private readonly o: ReplicaWeightsOptions) {}

  /** The LoRA adapter a replica serves, by the name it was loaded under; undefined for full weights. */
  adapter(r: Replica): string | undefined {
    return this.lora.has(r) ? adapterName(this.o.loraPrefix, r.version) : undefined;
  }

  /** Resolves when no sync is running (failed or not). */
  async settled(): Promise<void> {
    if (this.syncing) await this.syncing.catch(() => undefined);
  }

  /** Brings a returning replica to the newest weights; undefined, or why it failed. */
  async revive(r: Replica): Promise<string | undefined> {
    return this.latest && r.version !== this.latest.version ? await this.syncReplica(r, this.latest) : undefined;
  }

  /** Loads `weights` into the replicas; throws when none serves them afterwards. */
  async sync(weights?: PublishedWeights): Promise<void> {
    if (!weights) return; // the trainer published nothing: it shares weights with no server
    const { flavor, name } = this.o;
    if (flavor === 'vllm' && weights.kind === 'full' && this.o.vllmFullWeights !== 'disk') {
      throw new ClawGymError(ErrorCodes.CONFIG_INVALID, `${name}: the trainer publishes full weights (${weights.path}), and released vLLM has no route that loads full weights from a folder (its weight-transfer backends are nccl, ipc and sparse_nccl, sent from the trainer's GPUs; the disk backend is the unreleased PR #52152)`, {
        hint: "Use engine 'sglang' (POST /update_weights_from_disk loads the folder), train a LoRA adapter (trainer loraRank > 0 with a trainer that exports adapters; vLLM then loads it with /v1/load_lora_adapter), or sample on the trainer service (engine 'tinker'). A vLLM built with the disk backend: set engine.options.vllmFullWeights: 'disk'.",
      });
    }
    this.latest = weights;
    const run = this.syncAll(weights);
    this.syncing = run;
    try { await run; } finally { if (this.syncing === run) this.syncing = undefined; }
  }

  private async syncAll(weights: PublishedWeights): Promise<void> {
    const { set } = this;
    // The healthy replicas (one that is down is synced by the probe when it answers); when
    // none is, every one: an outage may be over, and the retries give it time to end.
    const healthy = set.replicas.filter((r) => r.healthy);
    const targets = healthy.length ? healthy : set.replicas;
    const results = await Promise.all(targets.map(async (r) => [r, await this.syncReplica(r, weights)] as const));
    for (const [r, why] of results) {
      if (why) this.o.markDown(r, `weight sync of version ${weights.version} failed: ${why}`);
      else r.healthy = true;
    }
    if (!set.replicas.some((r) => r.healthy && r.version === weights.version)) {
      const detail = set.replicas.map((r) => `${r.baseUrl}: ${r.lastError ?? `serves version ${r.version}`}`).join('; ');
      throw new ClawGymError(ErrorCodes.ENGINE_SYNC_FAILED, `${this.o.name}: could not load weights version ${weights.version} (${weights.path}) into any replica: ${detail}`, {
        hint: this.o.flavor === 'sglang'
          ? weights.kind === 'lora'
            ? 'SGLang loads an adapter when launched with --enable-lora --max-lora-rank <at least the adapter\'s r> --lora-target-modules all (or --lora-paths), and must read the adapter folder at the same path.'
            : 'The SGLang server must read the published folder (same path on its machine) and accept POST /update_weights_from_disk.'
          : weights.kind === 'lora'
            ? 'vLLM needs --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, and must read the adapter folder.'
            : 'vLLM needs VLLM_SERVER_DEV_MODE=1 and --weight-transfer-config \'{"backend":"disk"}\', and must read the published folder.',
      });
    }
  }

  /** Load `w` into one replica, with retries; resolves to undefined or to why it failed. */
  private async syncReplica(r: Replica, w: PublishedWeights): Promise<string | undefined> {
    const { retries, backoffMs } = this.o;
    let why = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(backoffMs * 2 ** (attempt - 1));
      try {
        const reported = await this.load(r, w);
        if (reported !== undefined && reported !== w.version) {
          why = `it reports serving version ${reported} after loading version ${w.version}`;
          continue; // retried like a failed call
        }
        if (w.kind === 'lora') this.lora.add(r); else this.lora.delete(r);
        r.version = w.version;
        return undefined;
      } catch (err) {
        why = errorText(err);
      }
    }
    return `${retries + 1} attempts: ${why}`;
  }

  /** One attempt: the version the replica reports serving afterwards, when it says. */
  private async load(r: Replica, w: PublishedWeights): Promise<number | undefined> {
    const call = this.o.control(r);
    const { loraPrefix } = this.o;
    if (this.o.flavor === 'sglang') {
      if (w.kind === 'lora') return await sglangLoraSync(call, w, loraPrefix);
      r.sglang ??= await sglangCapabilities(call);
      return await sglangSync(call, w, r.sglang);
    }
    if (w.kind === 'lora') return await vllmLoraSync(call, w, loraPrefix);
    return await vllmFullSync(call, w, { get initialized() { return r.transferReady; }, set initialized(v) { r.transferReady = v; } });
  }
}
