'use strict';
// Hand-made near-solutions for a few sample tasks of ClawGym-Task: what an agent that mostly got
// it right leaves in the workspace (run with bash in the workspace before grading, both ways).
// They lift sub-scores the stub outputs cannot reach, so the agreement is also checked on high
// scores.

const G = ['e|---3---', 'B|---0---', 'G|---0---', 'D|---0---', 'A|---2---', 'E|---3---'];
const D = ['e|---2---', 'B|---3---', 'G|---2---', 'D|---0---', 'A|---x---', 'E|---x---'];
const Em = ['e|---0---', 'B|---0---', 'G|---0---', 'D|---2---', 'A|---2---', 'E|---0---'];
const C = ['e|---0---', 'B|---1---', 'G|---0---', 'D|---2---', 'A|---3---', 'E|---x---'];
const diagram = (name, rows) => `${name}\n${rows.join('\n')}\n`;
const side = ['G         D         Em        C', ...G.map((_, i) => [G, D, Em, C].map((r) => r[i].padEnd(10)).join('').trimEnd())].join('\n');

const NEAR_SOLUTIONS = {
  // ASCII chord diagrams for G D Em C (no inputs).
  task_0176: {
    name: 'near-solution',
    writes: [
      ['output/normalized_chords.json', '["G", "D", "Em", "C"]\n'],
      ['output/unsupported.json', '[]\n'],
      ['output/diagrams/G.txt', diagram('G', G)],
      ['output/diagrams/D.txt', diagram('D', D)],
      ['output/diagrams/Em.txt', diagram('Em', Em)],
      ['output/diagrams/C.txt', diagram('C', C)],
      ['output/progression.txt', `${side}\n`],
    ],
    finalMessage: 'Wrote the progression and the four diagrams under output/.',
  },
  // The reminder queue of task_0000, computed from its CSVs as the query says.
  task_0000: {
    name: 'near-solution',
    writes: [],
    run: `python3 - <<'PY'
import csv, json, datetime, os
inc = list(csv.DictReader(open('input/incidents.csv')))
con = list(csv.DictReader(open('input/contacts.csv')))
role_for = {'content': 'Sponsor', 'moderation': 'Moderator'}
rows = []
for i in inc:
    if i.get('status') != 'open' or int(i.get('severity', 0)) < 3:
        continue
    for c in con:
        if c.get('role') == role_for.get(i.get('category')) and c.get('allowed_followup') == 'yes':
            d = datetime.date.fromisoformat(i['date'][:10])
            rows.append({'reminder_id': 'R-%s-%s' % (i['incident_id'], c['contact_id']), 'incident_id': i['incident_id'], 'contact_id': c['contact_id'],
                         'contact_name': c['name'], 'role': c['role'], 'incident_date': d.isoformat(), 'severity': int(i['severity']),
                         'relevance': int(c['relevance']), 'due_by': (d + datetime.timedelta(days=3)).isoformat(),
                         'reason': 'Open incident on topic: %s' % i['topic'], 'priority_score': int(i['severity']) * 10 + int(c['relevance'])})
rows.sort(key=lambda r: (-r['priority_score'], r['due_by'], r['reminder_id']))
os.makedirs('output', exist_ok=True)
with open('output/reminders.csv', 'w', newline='') as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ['reminder_id'])
    w.writeheader(); w.writerows(rows)
by_role = {}
for r in rows:
    by_role[r['role']] = by_role.get(r['role'], 0) + 1
json.dump({'total_reminders': len(rows), 'by_role': by_role, 'top_5': [{'reminder_id': r['reminder_id'], 'priority_score': r['priority_score']} for r in rows[:5]]}, open('output/summary.json', 'w'), indent=2)
PY`,
    finalMessage: 'Wrote output/reminders.csv and output/summary.json.',
  },
};

module.exports = { NEAR_SOLUTIONS };
