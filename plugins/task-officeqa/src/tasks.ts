import { Rng, type Task, type Verdict, type Workspace } from '@clawgym/core';
import { extractFinalAnswer, matchAnswer } from './answer';

const COMPANIES = ['Arcadia Mills', 'Borealis Freight', 'Cobalt Health', 'Dunmore Energy', 'Elara Foods', 'Fenwick Labs'];

/**
 * An OfficeQA-style question over generated annual-report documents placed in `corpus/`:
 * the answer sits in one report among several, stated in millions with a scale word.
 */
export function reportQuestionTask(seed: number): Task {
  const rng = new Rng(seed);
  const company = rng.pick(COMPANIES);
  const years = [2021, 2022, 2023, 2024];
  const revenue = new Map(years.map((y) => [y, rng.int(1200, 98_000) / 10]));
  const margin = new Map(years.map((y) => [y, rng.int(20, 380) / 10]));
  const year = rng.pick(years);
  const askMargin = rng.next() < 0.5;
  const gold = askMargin ? `${margin.get(year)!.toFixed(1)}%` : `${revenue.get(year)!.toFixed(1)} million`;
  const question = askMargin
    ? `What was ${company}'s operating margin in fiscal ${year}, in percent?`
    : `What was ${company}'s total revenue in fiscal ${year}, in millions of dollars?`;
  return {
    id: `officeqa-report-${seed}`,
    category: askMargin ? 'percentage' : 'amount',
    instruction:
      `The folder corpus/ holds annual reports. ${question} ` +
      'Write your answer to answer.txt inside <FINAL_ANSWER></FINAL_ANSWER> tags.',
    oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'answer.txt', content: `<FINAL_ANSWER>${gold}</FINAL_ANSWER>\n` } }] }],
    async setup(ws) {
      for (const y of years) {
        await ws.writeFile(`corpus/${company.replace(/\s+/g, '_').toLowerCase()}_${y}.txt`, [
          `${company} — Annual Report, fiscal year ${y}`,
          '',
          `Total revenue for the year was $${revenue.get(y)!.toFixed(1)} million.`,
          `Operating margin was ${margin.get(y)!.toFixed(1)}% of revenue.`,
          `Headcount at year end: ${rng.int(120, 9000)} employees.`,
        ].join('\n') + '\n');
      }
    },
    verify: (ws) => verifyFinalAnswer(ws, gold),
  };
}

/**
 * The OfficeQA verdict on a workspace: the last `<FINAL_ANSWER>` of `file` against `gold`
 * (OfficeQA's reward.py rule with ClawGym's extensions: see docs/verifiers.md). Reward 1 or 0.
 */
export async function verifyFinalAnswer(ws: Workspace, gold: string, options: { file?: string; relativeTolerance?: number } = {}): Promise<Verdict> {
  const file = options.file ?? 'answer.txt';
  if (!(await ws.exists(file))) return { reward: 0, pass: false, details: `${file} was not written` };
  const answer = extractFinalAnswer((await ws.readFile(file)).toString('utf8'));
  if (answer === undefined) return { reward: 0, pass: false, details: `no <FINAL_ANSWER> tags in ${file}` };
  if (answer.length === 0) return { reward: 0, pass: false, details: `the <FINAL_ANSWER> in ${file} is empty` };
  const { match: pass, reason } = matchAnswer(answer, gold, { relativeTolerance: options.relativeTolerance });
  return { reward: pass ? 1 : 0, pass, details: `answered "${answer}", expected "${gold}": ${reason}` };
}
