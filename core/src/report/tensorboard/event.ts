import protobuf from 'protobufjs';

/**
 * The part of TensorFlow's `Event` and `Summary` messages a scalar log needs, with the field
 * numbers of tensorflow/core/util/event.proto (`Event`: wall_time 1, step 2, file_version 3,
 * summary 5) and tensorflow/core/framework/summary.proto (`Summary.value` 1; `Value`: tag 1,
 * simple_value 2). Fields left out are optional there, so readers accept these messages.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    tensorflow: {
      nested: {
        Event: {
          fields: {
            wallTime: { type: 'double', id: 1 },
            step: { type: 'int64', id: 2 },
            fileVersion: { type: 'string', id: 3 },
            summary: { type: 'Summary', id: 5 },
          },
        },
        Summary: {
          fields: { value: { rule: 'repeated', type: 'Value', id: 1 } },
          nested: {
            Value: { fields: { tag: { type: 'string', id: 1 }, simpleValue: { type: 'float', id: 2 } } },
          },
        },
      },
    },
  },
});
const Event = root.lookupType('tensorflow.Event');

/** The first event of every file: the format version TensorBoard checks. */
export const encodeFileVersion = (wallTime: number): Uint8Array =>
  Event.encode(Event.create({ wallTime, fileVersion: 'brain.Event:2' })).finish();

/** One event of scalars at a step. */
export function encodeScalars(wallTime: number, step: number, scalars: Record<string, number>): Uint8Array {
  const value = Object.entries(scalars).map(([tag, simpleValue]) => ({ tag, simpleValue }));
  return Event.encode(Event.create({ wallTime, step, summary: { value } })).finish();
}
