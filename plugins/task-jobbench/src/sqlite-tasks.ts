import { Rng, type Task } from '@clawgym/core';
import { writeBytesTurn } from './oracle';
import { sqliteBytes, withWorkspaceDb } from './sqlite';
import { listProblems, verdict } from './verdict';

const CUSTOMERS = ['Acme Ltd', 'Birch & Co', 'Cinder Works', 'Delta Foods', 'Ember Labs', 'Fjord Travel', 'Granite Bank'];
const STATUSES = ['paid', 'paid', 'paid', 'refunded', 'pending'];
const PRODUCTS = ['Desk lamp', 'Monitor arm', 'Cable, USB-C 2m', 'Notebook "A5"', 'Stapler', 'Chair mat', 'Webcam', 'Headset'];

/**
 * Orders per customer: count the paid orders of each customer in `shop.db` (tables customers,
 * orders) and write `answer.json` mapping customer name → count.
 */
export function ordersPerCustomerTask(seed: number): Task {
  const rng = new Rng(seed);
  const customers = CUSTOMERS.filter(() => rng.next() < 0.7).slice(0, 5);
  if (customers.length < 3) customers.splice(0, customers.length, ...CUSTOMERS.slice(0, 3));
  const orders = Array.from({ length: rng.int(12, 30) }, (_, i) => ({
    id: 1001 + i, customer: rng.int(1, customers.length), status: rng.pick(STATUSES),
    total: rng.int(500, 90_000) / 100, placed: `2026-${String(rng.int(1, 12)).padStart(2, '0')}-${String(rng.int(1, 28)).padStart(2, '0')}`,
  }));
  const want: Record<string, number> = {};
  for (const o of orders) if (o.status === 'paid') want[customers[o.customer - 1]!] = (want[customers[o.customer - 1]!] ?? 0) + 1;
  return {
    id: `jobbench-orders-${seed}`,
    category: 'database',
    instruction:
      'shop.db is a SQLite database with the tables customers(id, name) and orders(id, customer_id, status, total, placed_at). ' +
      'Count the orders with status \'paid\' for each customer and write answer.json: a JSON object mapping each customer\'s ' +
      'name to that count. Leave out customers with no paid orders.',
    oracle: [{ toolCalls: [{ name: 'write_file', arguments: { path: 'answer.json', content: JSON.stringify(want) } }] }],
    async setup(ws) {
      await ws.writeFile('shop.db', sqliteBytes((db) => {
        db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);' +
          'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), status TEXT NOT NULL, total REAL NOT NULL, placed_at TEXT NOT NULL);');
        const c = db.prepare('INSERT INTO customers (id, name) VALUES (?, ?)');
        customers.forEach((name, i) => c.run(i + 1, name));
        const o = db.prepare('INSERT INTO orders VALUES (?, ?, ?, ?, ?)');
        for (const r of orders) o.run(r.id, r.customer, r.status, r.total, r.placed);
      }));
    },
    async verify(ws) {
      if (!(await ws.exists('answer.json'))) return verdict(false, 'answer.json was not written');
      let got: unknown;
      try {
        got = JSON.parse((await ws.readFile('answer.json')).toString('utf8'));
      } catch {
        return verdict(false, 'answer.json is not valid JSON');
      }
      if (typeof got !== 'object' || got === null || Array.isArray(got)) return verdict(false, 'answer.json is not a JSON object');
      const g = got as Record<string, unknown>;
      const problems: string[] = [];
      for (const k of [...new Set([...Object.keys(want), ...Object.keys(g)])].sort()) {
        if (g[k] !== want[k]) problems.push(`${k}: expected ${want[k] ?? 'absent (no paid orders)'}, found ${g[k] === undefined ? 'absent' : JSON.stringify(g[k])}`);
      }
      if (problems.length) return verdict(false, listProblems(problems));
      return verdict(true, `paid-order counts of ${Object.keys(want).length} customers correct`);
    },
  };
}

/** One row of the products table. */
interface Product { sku: string; name: string; price: number; stock: number }

const csvCell = (s: string | number) => (/[",\n]/.test(String(s)) ? `"${String(s).replace(/"/g, '""')}"` : String(s));

/**
 * Insert rows: add the rows of `new_products.csv` to table products of `shop.db`, leaving
 * the existing rows as they are. The verifier compares the whole table.
 */
export function insertRowsTask(seed: number): Task {
  const rng = new Rng(seed);
  const names = [...PRODUCTS];
  const all: Product[] = Array.from({ length: rng.int(6, 8) }, (_, i) => ({
    sku: `SKU-${String(rng.int(100, 999))}${String.fromCharCode(65 + i)}`,
    name: names.splice(rng.int(0, names.length - 1), 1)[0]!,
    price: rng.int(199, 25_000) / 100,
    stock: rng.int(0, 400),
  }));
  const existing = all.slice(0, all.length - rng.int(2, 4));
  const added = all.slice(existing.length);
  return {
    id: `jobbench-insert-${seed}`,
    category: 'database',
    instruction:
      'shop.db is a SQLite database with the table products(sku, name, price, stock). Insert every row of new_products.csv ' +
      '(header: sku,name,price,stock) into products, with price as a number and stock as an integer. Do not change or remove the rows already there.',
    oracle: async () => [writeBytesTurn('shop.db', sqliteBytes((db) => {
      db.exec('CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, stock INTEGER NOT NULL)');
      const ins = db.prepare('INSERT INTO products VALUES (@sku, @name, @price, @stock)');
      for (const p of all) ins.run({ ...p });
    }))],
    async setup(ws) {
      await ws.writeFile('shop.db', sqliteBytes((db) => {
        db.exec('CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, stock INTEGER NOT NULL)');
        const ins = db.prepare('INSERT INTO products VALUES (@sku, @name, @price, @stock)');
        for (const p of existing) ins.run({ ...p });
      }));
      await ws.writeFile('new_products.csv', ['sku,name,price,stock', ...added.map((p) => [p.sku, p.name, p.price.toFixed(2), p.stock].map(csvCell).join(','))].join('\n') + '\n');
    },
    async verify(ws) {
      if (!(await ws.exists('shop.db'))) return verdict(false, 'shop.db is gone');
      const read = await withWorkspaceDb(ws, 'shop.db', (db) => {
        const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'products'").get();
        return table ? (db.prepare('SELECT sku, name, price, stock FROM products').all() as Record<string, unknown>[]) : undefined;
      });
      if ('error' in read) return verdict(false, `cannot read the database: ${read.error}`);
      if (!read.value) return verdict(false, 'shop.db has no table products');
      const rows = new Map(read.value.map((r) => [String(r.sku), r]));
      const problems: string[] = [];
      for (const p of all) {
        const r = rows.get(p.sku);
        const what = existing.includes(p) ? 'existing row' : 'new row';
        if (!r) { problems.push(`${what} sku ${p.sku} is missing`); continue; }
        if (r.name !== p.name) problems.push(`sku ${p.sku}: name expected ${JSON.stringify(p.name)}, found ${JSON.stringify(r.name)}`);
        if (typeof r.price !== 'number' || Math.abs(r.price - p.price) > 1e-9) problems.push(`sku ${p.sku}: price expected ${p.price}, found ${JSON.stringify(r.price)}${typeof r.price === 'string' ? ' (text, not a number)' : ''}`);
        if (r.stock !== p.stock) problems.push(`sku ${p.sku}: stock expected ${p.stock}, found ${JSON.stringify(r.stock)}${typeof r.stock === 'string' ? ' (text, not an integer)' : ''}`);
      }
      const extra = [...rows.keys()].filter((k) => !all.some((p) => p.sku === k));
      if (extra.length) problems.push(`unexpected rows with sku ${extra.map((k) => JSON.stringify(k)).join(', ')}`);
      if (problems.length) return verdict(false, listProblems(problems));
      return verdict(true, `products holds the ${existing.length} existing and ${added.length} new rows, all correct`);
    },
  };
}
