import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * scripts/server-contracts/extract.py on a small server written here: the constructs the real
 * sources use (pydantic fields with Field bounds and defaults, Optional/|None, Literal, Annotated
 * unions, model_config extra, dataclasses, msgspec Structs, a plain class built with Cls(**body),
 * FastAPI routes on an app and on a prefixed APIRouter, a body parsed from the raw Request), and
 * two commits of it, whose outputs differ exactly where the source changed.
 */
const script = resolve(__dirname, '../../../scripts/server-contracts/extract.py');

const V1 = `
from dataclasses import dataclass, field
from typing import Annotated, Literal, Optional
import msgspec
from fastapi import APIRouter, FastAPI, Request
from pydantic import BaseModel, ConfigDict, Field

ID_PATTERN = r"^[a-z]+$"
app = FastAPI()
router = APIRouter(prefix="/v2")

class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

class Chunk(BaseModel):
    type: Literal["text"] = "text"
    tokens: list[int]

Part = Annotated[Chunk | "Image", Field(discriminator="type")]

class Image(Strict):
    type: Literal["image"] = "image"
    data: bytes

class Step(Strict):
    model_id: str = Field(..., pattern=ID_PATTERN, max_length=8)
    lr: float = Field(default=1e-4, ge=0.0, lt=1.0)
    parts: list[Part]
    note: Optional[str] = None

class Sampling:
    def __init__(self, max_new_tokens: int = 16, temperature: float = 1.0):
        self.max_new_tokens = max_new_tokens

@dataclass
class Generate:
    input_ids: list[int]
    sampling_params: dict = field(default_factory=dict)

class Out(msgspec.Struct, forbid_unknown_fields=True):
    ok: bool

@app.post("/step", response_model=Out)
async def step(request: Step):
    ...

@router.api_route("/generate", methods=["POST", "PUT"])
async def generate(obj: Generate, request: Request):
    ...

async def read(request: Request):
    return Step.model_validate_json(await request.body())

@app.post("/raw")
async def raw(request: Request):
    await read(request)
`;

function git(dir: string, ...args: string[]) {
  return execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { encoding: 'utf8' }).trim();
}

describe('scripts/server-contracts/extract.py', () => {
  let dir: string;
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'clawgym-extract-')); git(dir, 'init', '-q'); });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const extract = (commit: string, out: string) => {
    execFileSync('python3', [script, '--repo', 'example/server', '--commit', commit, '--git', join(dir, '.git'), '--file', 'server.py', '--init-class', 'Sampling', '--define', 'Sampling', '--out', join(dir, out)], { encoding: 'utf8' });
    return JSON.parse(readFileSync(join(dir, out), 'utf8'));
  };

  it('reads models and routes from the source at a commit, stamped with it', () => {
    writeFileSync(join(dir, 'server.py'), V1);
    git(dir, 'add', '.'); git(dir, 'commit', '-qm', 'v1');
    const c = extract(git(dir, 'rev-parse', 'HEAD'), 'v1.json');
    expect(c['x-commit']).toMatch(/^[0-9a-f]{40}$/);
    expect(c['x-repository']).toBe('example/server');
    expect(c['x-unresolved']).toEqual([]);
    expect(c.routes.map((r: any) => [r.methods.join('|'), r.path, r.body ?? null, r.response ?? null, !!r.bodyParsedFromRequest])).toEqual([
      ['POST', '/raw', 'Step', null, true],
      ['POST', '/step', 'Step', 'Out', false],
      ['POST|PUT', '/v2/generate', 'Generate', null, false],
    ]);
    const d = c.definitions;
    expect(d.Step).toMatchObject({ 'x-extra': 'forbid', additionalProperties: false, required: ['model_id', 'parts'], 'x-source': 'server.py:25' });
    expect(d.Step.properties.model_id).toEqual({ type: 'string', pattern: '^[a-z]+$', maxLength: 8 });
    expect(d.Step.properties.lr).toEqual({ type: 'number', minimum: 0, exclusiveMaximum: 1 });
    expect(d.Step.properties.parts).toEqual({ type: 'array', items: { anyOf: [{ $ref: '#/definitions/Chunk' }, { $ref: '#/definitions/Image' }] } });
    expect(d.Step.properties.note).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(d.Chunk).toMatchObject({ 'x-extra': 'ignore', required: ['tokens'], properties: { type: { enum: ['text'] } } });
    expect(d.Chunk.additionalProperties).toBeUndefined();
    expect(d.Generate).toMatchObject({ 'x-kind': 'dataclass', required: ['input_ids'] });
    expect(d.Sampling).toMatchObject({ 'x-kind': 'init', 'x-extra': 'forbid', additionalProperties: false, properties: { max_new_tokens: { type: 'integer' }, temperature: { type: 'number' } } });
    expect(d.Out).toMatchObject({ 'x-kind': 'msgspec', 'x-extra': 'forbid' });
  });

  it('run on a newer commit, the difference is the source\'s: a field added to a model, a route added', () => {
    writeFileSync(join(dir, 'server.py'), `${V1}\n@app.get("/healthz")\nasync def healthz():\n    ...\n`.replace('    note: Optional[str] = None', '    note: Optional[str] = None\n    seq_id: int | None = None'));
    git(dir, 'commit', '-qam', 'v2');
    const [a, b] = [extract(git(dir, 'rev-parse', 'HEAD~1'), 'a.json'), extract(git(dir, 'rev-parse', 'HEAD'), 'b.json')];
    expect(Object.keys(b.definitions.Step.properties).filter((k) => !(k in a.definitions.Step.properties))).toEqual(['seq_id']);
    expect(b.routes.filter((r: any) => !a.routes.some((x: any) => x.path === r.path)).map((r: any) => r.path)).toEqual(['/healthz']);
    expect({ ...a.definitions.Chunk }).toEqual(b.definitions.Chunk);
  });

  it('from a folder holding only some files of a commit (--tree): a body whose model is in a file not read is named and marked unresolved, a Query() parameter of such a type stays a query parameter', () => {
    // As SGLang's http_server.py at a commit whose io_struct.py is not to be had: the route still takes a body.
    const tree = join(dir, 'tree');
    mkdirSync(tree);
    writeFileSync(join(tree, 'server.py'), [
      'from typing import Annotated, Optional',
      'from fastapi import FastAPI, Query, Request, UploadFile',
      'from elsewhere import GenerateReqInput, PauseMode, ProfileReqInput',
      'app = FastAPI()',
      '',
      '@app.post("/generate")',
      'async def generate(obj: GenerateReqInput, request: Request):',
      '    ...',
      '',
      '@app.post("/profile")',
      'async def profile(obj: Optional[ProfileReqInput] = None):',
      '    ...',
      '',
      '@app.post("/pause")',
      'async def pause(mode: Annotated[PauseMode, Query()] = "abort", clear: bool = Query(True)):',
      '    ...',
      '',
      '@app.post("/upload")',
      'async def upload(file: UploadFile, request: Request):',
      '    ...',
      '',
    ].join('\n'));
    execFileSync('python3', [script, '--repo', 'example/server', '--commit', 'a'.repeat(40), '--tree', tree, '--file', 'server.py', '--out', join(dir, 'tree.json')], { encoding: 'utf8' });
    const c = JSON.parse(readFileSync(join(dir, 'tree.json'), 'utf8'));
    expect(c['x-unresolved']).toEqual(['GenerateReqInput', 'ProfileReqInput']);
    expect(c.definitions).toEqual({});
    expect(c.routes.map((r: any) => [r.path, r.body ?? null, r.bodyUnresolved ?? false, r.bodyOptional ?? null, r.query ?? []])).toEqual([
      ['/generate', 'GenerateReqInput', true, false, []],
      ['/pause', null, false, null, ['mode', 'clear']],
      ['/profile', 'ProfileReqInput', true, true, []],
      ['/upload', null, false, null, []],
    ]);
  });
});
