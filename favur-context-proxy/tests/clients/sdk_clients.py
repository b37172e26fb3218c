"""Real clients through the proxy: the official `openai` (Chat Completions and
Responses), `anthropic` and Google Gen AI (`google-genai`, Gemini) Python SDKs, streaming
and not.

Reads a plan (JSON) from argv[1]: {"proxy": URL, "runs": [{"api", "stream", "session",
"bodies": [...]}, ...]}. Sends every body of every run with the SDK, in order, naming the
run's session in the `x-favur-session` header, and prints one JSON line per answer:
{"session", "i", "text"} (the reply text as the SDK parsed it) and, without streaming,
"raw" (the response body the SDK received, as text).
"""

import json
import sys

import anthropic
import openai
from google import genai
from google.genai import types


def chat(client, body, stream, headers):
    if stream:
        text = ""
        for chunk in client.chat.completions.create(**body, stream=True, extra_headers=headers):
            for choice in chunk.choices:
                text += choice.delta.content or ""
        return text, None
    raw = client.chat.completions.with_raw_response.create(**body, extra_headers=headers)
    return raw.parse().choices[0].message.content, raw.http_response.text


def responses(client, body, stream, headers):
    if stream:
        text = ""
        for event in client.responses.create(**body, stream=True, extra_headers=headers):
            if event.type == "response.output_text.delta":
                text += event.delta
        return text, None
    raw = client.responses.with_raw_response.create(**body, extra_headers=headers)
    return raw.parse().output_text, raw.http_response.text


def messages(client, body, stream, headers):
    if stream:
        text = ""
        for event in client.messages.create(**body, stream=True, extra_headers=headers):
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                text += event.delta.text
        return text, None
    raw = client.messages.with_raw_response.create(**body, extra_headers=headers)
    return raw.parse().content[0].text, raw.http_response.text


def gemini(client, body, stream, headers):
    """`generate_content` (`:generateContent`) or `generate_content_stream`
    (`:streamGenerateContent?alt=sse`), the body's `systemInstruction` and `contents`."""
    config = types.GenerateContentConfig(
        system_instruction=body["systemInstruction"],
        temperature=0.0,
        http_options=types.HttpOptions(headers=headers),
    )
    args = {"model": body["model"], "contents": body["contents"], "config": config}
    if stream:
        text = ""
        for chunk in client.models.generate_content_stream(**args):
            text += chunk.text or ""
        return text, None
    return client.models.generate_content(**args).text, None


def main():
    plan = json.load(open(sys.argv[1]))
    proxy = plan["proxy"]
    oa = openai.OpenAI(base_url=proxy + "/v1", api_key="sk-test", max_retries=0)
    an = anthropic.Anthropic(base_url=proxy, api_key="sk-ant-test", max_retries=0)
    gm = genai.Client(api_key="AIza-test", http_options=types.HttpOptions(base_url=proxy))
    calls = {
        "chat": (oa, chat),
        "responses": (oa, responses),
        "anthropic": (an, messages),
        "gemini": (gm, gemini),
    }
    for run in plan["runs"]:
        client, call = calls[run["api"]]
        headers = {"x-favur-session": run["session"]}
        for i, body in enumerate(run["bodies"]):
            text, raw = call(client, body, run["stream"], headers)
            line = {"session": run["session"], "i": i, "text": text}
            if raw is not None:
                line["raw"] = raw
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
