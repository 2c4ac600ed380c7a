"""The official `openai` Python client against `hearth-cli serve` (run by tests/serve.rs).

usage: openai_client.py BASE_URL MODEL_ID
Exits non-zero on the first failed check; prints what it checked.
"""

import json
import sys

import openai
from openai import OpenAI

base_url, model = sys.argv[1], sys.argv[2]
client = OpenAI(base_url=base_url, api_key="not-needed-on-loopback", max_retries=0, timeout=120)
checks = 0


def check(condition, what):
    global checks
    if not condition:
        sys.exit(f"FAILED: {what}")
    checks += 1


# The loaded model is the one listed.
listed = [m.id for m in client.models.list().data]
check(listed == [model], f"/v1/models lists the loaded model: {listed}")

# A ten-turn streamed chat: the role first, text, a finish reason, usage last; the cache carries
# the conversation from turn to turn.
history = [{"role": "system", "content": "You are brief."}]
for turn in range(10):
    history.append({"role": "user", "content": f"Say one short sentence about the number {turn + 1}."})
    stream = client.chat.completions.create(
        model=model,
        messages=history,
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=12,
        temperature=0,
        extra_body={"top_k": 1, "min_p": 0.05},
    )
    roles, text, finish, usage = [], "", None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
            check(chunk.choices == [], "the usage chunk has no choices")
            continue
        delta = chunk.choices[0].delta
        if delta.role:
            roles.append(delta.role)
        text += delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    check(roles == ["assistant"], f"turn {turn}: the role comes once, first: {roles}")
    check(text.strip() != "", f"turn {turn}: some text")
    check(finish in ("stop", "length"), f"turn {turn}: a finish reason: {finish}")
    check(usage is not None and usage.completion_tokens <= 12, f"turn {turn}: usage within max_tokens: {usage}")
    check(usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, f"turn {turn}: usage adds up")
    if turn > 0:
        cached = usage.prompt_tokens_details.cached_tokens
        check(cached > 0, f"turn {turn}: the conversation so far came from the cache: {usage}")
    history.append({"role": "assistant", "content": text})

# Not streamed: one chat.completion, with the prompt read as the streamed request reads it.
question = [{"role": "user", "content": "Name a colour."}]
whole = client.chat.completions.create(model=model, messages=question, max_tokens=10, temperature=0)
check(whole.object == "chat.completion" and whole.choices[0].message.role == "assistant", "a chat.completion")
check(whole.choices[0].message.content.strip() != "", "some text")
check(whole.usage.completion_tokens <= 10 and whole.choices[0].finish_reason in ("stop", "length"), "usage and finish reason")
streamed = client.chat.completions.create(
    model=model, messages=question, max_tokens=10, temperature=0, stream=True, stream_options={"include_usage": True}
)
usage = [c.usage for c in streamed if c.usage is not None]
check(len(usage) == 1 and usage[0].prompt_tokens == whole.usage.prompt_tokens, f"the same prompt: {usage} vs {whole.usage}")
# (Its text is not compared: the first request read the prompt cold, the second from the cache,
# and a greedy near-tie may go either way between the two.)

# Log-probabilities: one entry per token written, the token first among its alternatives when
# greedy, spelling the reply; streamed, they come with the chunks they belong to.
scored = client.chat.completions.create(
    model=model, messages=question, max_tokens=6, temperature=0, logprobs=True, top_logprobs=3
)
content = scored.choices[0].logprobs.content
check(len(content) == scored.usage.completion_tokens, f"one entry per token: {len(content)} vs {scored.usage}")
check("".join(c.token for c in content) == scored.choices[0].message.content, "the tokens spell the reply")
for c in content:
    check(len(c.top_logprobs) == 3 and c.top_logprobs[0].logprob == c.logprob and c.logprob <= 0, f"greedy's pick leads: {c}")
    check(sum(2.718281828 ** t.logprob for t in c.top_logprobs) <= 1.0001, f"probabilities sum to at most 1: {c}")
streamed = client.chat.completions.create(
    model=model, messages=question, max_tokens=6, temperature=0, logprobs=True, stream=True, stream_options={"include_usage": True}
)
entries, usage = 0, None
for chunk in streamed:
    usage = chunk.usage or usage
    if chunk.choices and chunk.choices[0].logprobs is not None:
        entries += len(chunk.choices[0].logprobs.content)
check(entries == usage.completion_tokens, f"streamed: one entry per token: {entries} vs {usage}")

# /v1/completions: the prompt continued as it is (no chat template), with the legacy logprobs.
prompt = "The capital of France is"
done = client.completions.create(model=model, prompt=prompt, max_tokens=5, temperature=0, logprobs=2)
choice = done.choices[0]
check(done.object == "text_completion" and choice.text.strip() != "", f"a text completion: {done}")
check(done.usage.prompt_tokens < 12, f"the prompt alone, no template: {done.usage}")
lp = choice.logprobs
check(len(lp.tokens) == len(lp.token_logprobs) == len(lp.text_offset) == done.usage.completion_tokens, f"one entry per token: {lp}")
check("".join(lp.tokens) == choice.text and lp.text_offset[0] == 0, f"the tokens spell the text: {lp}")
check(all(len(top) <= 2 for top in lp.top_logprobs), f"at most 2 alternatives: {lp.top_logprobs}")
streamed = "".join(c.choices[0].text for c in client.completions.create(model=model, prompt=prompt, max_tokens=5, temperature=0, stream=True) if c.choices)
check(streamed.strip() != "", "a streamed text completion")
try:
    client.completions.create(model=model, prompt=prompt, echo=True)
    check(False, "echo is refused")
except openai.BadRequestError as e:
    check(e.param == "echo", f"echo: {e}")

# Tools: the model (whose template knows none: the generic format) calls one, its arguments kept to
# the schema by the grammar; whole and streamed as OpenAI sends calls; then reads the result and
# answers, the first round's prompt read from the cache.
weather = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather forecast for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "maxLength": 40},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city", "unit"],
        },
    },
}
ask = [{"role": "user", "content": "What is the weather in Paris?"}]


def valid_call(call, what):
    check(call.type == "function" and call.function.name == "get_weather" and call.id, f"{what}: a call of get_weather: {call}")
    arguments = json.loads(call.function.arguments)
    check(set(arguments) == {"city", "unit"} and isinstance(arguments["city"], str), f"{what}: its arguments: {arguments}")
    check(arguments["unit"] in ("celsius", "fahrenheit"), f"{what}: a unit of the enum: {arguments}")


# One call (a model this small repeats a call when more are allowed).
one = {"tools": [weather], "tool_choice": "required", "parallel_tool_calls": False, "max_tokens": 80, "temperature": 0}
called = client.chat.completions.create(model=model, messages=ask, **one)
choice = called.choices[0]
check(choice.finish_reason == "tool_calls" and choice.message.content is None, f"a call, no text: {choice}")
check(len(choice.message.tool_calls) == 1, f"one call: {choice.message.tool_calls}")
for call in choice.message.tool_calls:
    valid_call(call, "whole")
stream = client.chat.completions.create(model=model, messages=ask, stream=True, **one)
assembled, finish, text, fragments = {}, None, "", 0
for chunk in stream:
    delta = chunk.choices[0].delta
    text += delta.content or ""
    for piece in delta.tool_calls or []:
        call = assembled.setdefault(piece.index, {"id": None, "name": "", "arguments": ""})
        call["id"] = piece.id or call["id"]
        call["name"] += (piece.function.name or "") if piece.function else ""
        call["arguments"] += (piece.function.arguments or "") if piece.function else ""
        fragments += 1 if piece.function and piece.function.arguments else 0
    finish = chunk.choices[0].finish_reason or finish
check(fragments > 1, f"streamed: the arguments come as they are written, in {fragments} pieces")
check(finish == "tool_calls" and text == "" and len(assembled) == 1, f"streamed: calls, no text: {finish} {text!r} {assembled}")
for call in assembled.values():
    check(call["id"] and call["name"] == "get_weather", f"streamed: {call}")
    arguments = json.loads(call["arguments"])
    check(set(arguments) == {"city", "unit"} and arguments["unit"] in ("celsius", "fahrenheit"), f"streamed: {arguments}")
history = ask + [choice.message.model_dump(exclude_none=True)]
history += [{"role": "tool", "tool_call_id": c.id, "content": '{"temperature": 18, "sky": "cloudy"}'} for c in choice.message.tool_calls]
answer = client.chat.completions.create(model=model, messages=history, tools=[weather], max_tokens=30, temperature=0)
check(answer.choices[0].finish_reason in ("stop", "length") and answer.choices[0].message.content, f"round two in words: {answer}")
# Round two reads only what is new: the results (in their turn); round one's prompt and the call
# come from the cache, the call sent back as the server gave it.
read = answer.usage.prompt_tokens - answer.usage.prompt_tokens_details.cached_tokens
results = answer.usage.prompt_tokens - called.usage.prompt_tokens - called.usage.completion_tokens
print(f"round two: {read} tokens read, {results} of results ({answer.usage}, round one {called.usage})")
check(0 < read <= results * 1.1, f"round two read only the results: {read} tokens read, {results} of results")
for bad, param in [
    ({"tool_choice": {"type": "function", "function": {"name": "get_news"}}}, "tool_choice"),
    ({"tools": [{"type": "function", "function": {"name": "get weather"}}]}, "tools"),
    ({"tool_choice": "always"}, "tool_choice"),
]:
    try:
        client.chat.completions.create(model=model, messages=ask, **{"tools": [weather], **bad})
        check(False, f"{bad} is refused")
    except openai.BadRequestError as e:
        check(e.param == param, f"{bad}: {e}")

# Reasoning: a reply's leading <think> block is answered apart as `reasoning_content` (llama.cpp's
# server's deepseek format), whole and streamed; a grammar makes this small model reason. Left in
# the content with `reasoning_format: none`; sent back apart, the model reads it as its block again.
thinking = 'root ::= "<think>\\nThe user greets me.\\n</think>\\n\\n" [A-Za-z ,.!]+'
greeting = [{"role": "user", "content": "Hello!"}]
reasoned = client.chat.completions.create(
    model=model, messages=greeting, max_tokens=48, temperature=0, extra_body={"grammar": thinking}
)
message = reasoned.choices[0].message
check(getattr(message, "reasoning_content", None) == "The user greets me.", f"the reasoning apart: {message}")
check("<think>" not in message.content and message.content.lstrip() == message.content != "", f"the answer alone: {message}")
details = reasoned.usage.completion_tokens_details
check(details is not None and 0 < details.reasoning_tokens < reasoned.usage.completion_tokens, f"its tokens: {reasoned.usage}")
reasoning, content = "", ""
for chunk in client.chat.completions.create(
    model=model, messages=greeting, max_tokens=48, temperature=0, stream=True, extra_body={"grammar": thinking}
):
    if chunk.choices:
        reasoning += getattr(chunk.choices[0].delta, "reasoning_content", None) or ""
        content += chunk.choices[0].delta.content or ""
check(reasoning == "The user greets me.", f"streamed, the reasoning apart: {reasoning!r}")
check("<think>" not in content and content.strip() != "", f"streamed, the answer alone: {content!r}")
raw = client.chat.completions.create(
    model=model, messages=greeting, max_tokens=48, temperature=0, extra_body={"grammar": thinking, "reasoning_format": "none"}
)
check(raw.choices[0].message.content.startswith("<think>\nThe user greets me.\n</think>"), f"left in: {raw.choices[0].message}")
back = greeting + [{"role": "assistant", "content": message.content, "reasoning_content": "The user greets me."}]
again = client.chat.completions.create(
    model=model, messages=back + [{"role": "user", "content": "Thanks."}], max_tokens=4, temperature=0
)
check(again.choices[0].message.content.strip() != "", f"a reply after a reasoned turn sent back: {again}")
# Thinking off, as llama.cpp's server takes it (SmolLM2's template has no switch: the reply is as ever).
# Other template variables and efforts reach the template, which here reads none of them.
for off in (
    {"chat_template_kwargs": {"enable_thinking": False}},
    {"reasoning_effort": "none"},
    {"reasoning_budget_tokens": 0},
    {"reasoning_effort": "high", "chat_template_kwargs": {"add_vision_id": True}},
):
    quiet = client.chat.completions.create(model=model, messages=greeting, max_tokens=4, temperature=0, extra_body=off)
    check(quiet.choices[0].message.content.strip() != "", f"{off}: a reply")
for bad, param in [
    ({"reasoning_format": "sometimes"}, "reasoning_format"),
    ({"reasoning_effort": "extreme"}, "reasoning_effort"),
    ({"chat_template_kwargs": {"messages": []}}, "chat_template_kwargs.messages"),
    ({"chat_template_kwargs": {"enable_thinking": "no"}}, "chat_template_kwargs.enable_thinking"),
    ({"reasoning_budget_tokens": -2}, "reasoning_budget_tokens"),
]:
    try:
        client.chat.completions.create(model=model, messages=greeting, max_tokens=2, extra_body=bad)
        check(False, f"{bad} is refused")
    except openai.BadRequestError as e:
        check(e.param == param, f"{bad}: {e}")
try:
    client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Hi", "reasoning_content": "mine"}], max_tokens=2
    )
    check(False, "a user's reasoning is refused")
except openai.BadRequestError as e:
    check("reasoning_content" in (e.param or ""), f"a user's reasoning: {e}")

# Errors come as the client's own exceptions, naming what is wrong.
try:
    client.chat.completions.create(model="gpt-4o", messages=question)
    check(False, "an unknown model is refused")
except openai.NotFoundError as e:
    check(e.code == "model_not_found" and e.param == "model", f"model_not_found: {e}")
try:
    client.chat.completions.create(model=model, messages=question, top_p=2)
    check(False, "top_p 2 is refused")
except openai.BadRequestError as e:
    check(e.param == "top_p" and "between 0 and 1" in e.message, f"top_p out of range: {e}")
try:
    client.chat.completions.create(model=model, messages=question, extra_body={"frobnicate": True})
    check(False, "an unknown field is refused")
except openai.BadRequestError as e:
    check(e.param == "frobnicate", f"unknown field: {e}")
try:
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": "word " * 3000}])
    check(False, "a conversation longer than the context is refused")
except openai.BadRequestError as e:
    check(e.code == "context_length_exceeded", f"context_length_exceeded: {e}")

print(f"openai {openai.__version__}: {checks} checks passed")
