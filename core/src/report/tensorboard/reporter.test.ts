import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeIf } from '../../testing/harnesses';
import { tensorboardDir, tensorboardReporter } from './reporter';

/**
 * A reader that is not ours: Google's protobuf runtime (Debian's python3-protobuf) decodes the
 * events against descriptors built here with the field numbers of TensorFlow's event.proto and
 * summary.proto, and crcmod's predefined `crc-32c` checks TFRecord's masked CRCs, as
 * tensorboard's own `tensorboard/backend/event_processing/event_file_loader.py` does.
 */
const READER = `
import json, struct, sys, crcmod.predefined
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
F = descriptor_pb2.FieldDescriptorProto
fd = descriptor_pb2.FileDescriptorProto(name='event.proto', package='tensorflow')
def msg(name, fields):
    m = fd.message_type.add(name=name)
    for fname, num, ftype, label, tname in fields:
        f = m.field.add(name=fname, number=num, type=ftype, label=label)
        if tname: f.type_name = tname
    return m
opt = F.LABEL_OPTIONAL
summary = msg('Summary', [('value', 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, '.tensorflow.Summary.Value')])
value = summary.nested_type.add(name='Value')
value.field.add(name='tag', number=1, type=F.TYPE_STRING, label=opt)
value.field.add(name='simple_value', number=2, type=F.TYPE_FLOAT, label=opt)
msg('Event', [('wall_time', 1, F.TYPE_DOUBLE, opt, None), ('step', 2, F.TYPE_INT64, opt, None),
              ('file_version', 3, F.TYPE_STRING, opt, None), ('summary', 5, F.TYPE_MESSAGE, opt, '.tensorflow.Summary')])
pool = descriptor_pool.DescriptorPool(); pool.Add(fd)
desc = pool.FindMessageTypeByName('tensorflow.Event')
# GetMessageClass is protobuf >= 4.22; Debian 12's 3.21 (python 4.21) has the factory's GetPrototype.
Event = message_factory.GetMessageClass(desc) if hasattr(message_factory, 'GetMessageClass') else message_factory.MessageFactory(pool).GetPrototype(desc)
crc = crcmod.predefined.mkPredefinedCrcFun('crc-32c')
mask = lambda c: ((((c >> 15) | (c << 17)) & 0xffffffff) + 0xa282ead8) & 0xffffffff
data = open(sys.argv[1], 'rb').read(); i = 0; out = []
while i < len(data):
    header = data[i:i + 8]; (n,) = struct.unpack('<Q', header); (hc,) = struct.unpack('<I', data[i + 8:i + 12])
    assert hc == mask(crc(header)), 'length crc'
    body = data[i + 12:i + 12 + n]; (bc,) = struct.unpack('<I', data[i + 12 + n:i + 16 + n])
    assert bc == mask(crc(body)), 'data crc'
    e = Event(); e.ParseFromString(body); i += 16 + n
    out.append({'wall_time': e.wall_time, 'step': e.step, 'file_version': e.file_version,
                'values': {v.tag: v.simple_value for v in e.summary.value}})
print(json.dumps(out))
`;

const python = '/usr/bin/python3';
const readerMissing = !existsSync(python) ? `${python} is absent`
  : spawnSync(python, ['-c', 'import google.protobuf, crcmod'], { encoding: 'utf8' }).status !== 0
    ? 'Debian\'s python3-protobuf and python3-crcmod are not installed (apt-get install python3-protobuf python3-crcmod)' : undefined;

describeIf(readerMissing, 'TensorBoard reporter', () => {
  const dirs: string[] = [];
  afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

  it('writes event files an independent TFRecord + protobuf reader reads back, every numeric value at its step', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'clawgym-tb-'));
    dirs.push(runDir);
    const reporter = tensorboardReporter();
    const run = { runId: 'tb', runDir };
    await reporter.onMetrics!({ kind: 'eval', step: 0, time: 1_700_000_000_000, values: { pass1: 0.25, 'pass1/agentloop/all': 0.25 } }, run);
    await reporter.onMetrics!({ kind: 'step', step: 1, time: 1_700_000_001_500, values: { reward: 0.5, 'train/loss': -0.125, note: 'not a number' } }, run);
    await reporter.onMetrics!({ kind: 'step', step: 2, time: 1_700_000_003_000, values: { reward: 0.75, 'train/loss': 0.0625 } }, run);
    const file = await reporter.render!(runDir);
    expect(readdirSync(tensorboardDir(runDir))).toEqual([file.split('/').pop()]);
    expect(file).toMatch(/events\.out\.tfevents\.\d+\./);

    const read = spawnSync(python, ['-c', READER, file], { encoding: 'utf8' });
    expect(read.stderr).toBe('');
    const events = JSON.parse(read.stdout) as { wall_time: number; step: number; file_version: string; values: Record<string, number> }[];
    expect(events[0]).toMatchObject({ file_version: 'brain.Event:2', values: {} });
    expect(events.slice(1)).toEqual([
      { wall_time: 1_700_000_000, step: 0, file_version: '', values: { 'eval/pass1': 0.25, 'eval/pass1/agentloop/all': 0.25 } },
      { wall_time: 1_700_000_001.5, step: 1, file_version: '', values: { reward: 0.5, 'train/loss': -0.125 } },
      { wall_time: 1_700_000_003, step: 2, file_version: '', values: { reward: 0.75, 'train/loss': 0.0625 } },
    ]);
  });
});
