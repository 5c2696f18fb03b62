import { z } from 'zod';

/**
 * Adam and its schedule (warm-up, then constant) as a trainer slot's `optimizer` options, with
 * the embedded trainer's defaults: one schema for every trainer that takes them (the embedded
 * one extends it with its value head's learning-rate scale; the Tinker client sends it to the
 * service with each `optim_step`).
 */
export const AdamOptions = z.strictObject({
  lr: z.number().positive().default(3e-4),
  beta1: z.number().default(0.9),
  beta2: z.number().default(0.99),
  eps: z.number().default(1e-8),
  weightDecay: z.number().min(0).default(0.01),
  gradClip: z.number().min(0).default(1),
  warmupSteps: z.number().int().min(0).default(10),
});
