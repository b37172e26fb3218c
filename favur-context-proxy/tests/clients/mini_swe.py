"""An unmodified mini-swe-agent (DefaultAgent, LitellmModel, its own SWE-bench config)
runs a recorded task through the proxy.

argv: PROXY_URL TRACE_JSON MESSAGES_OUT. The model is the proxy's OpenAI-compatible
endpoint (the scripted upstream behind it answers with the run's recorded replies, in
order). The environment is the one piece that is not the agent's own: instead of a
SWE-bench container, it answers each command with the output recorded for it in the
trace, so the run is the recorded task, step for step, and nothing runs on this machine.
Prints {"exit_status", "n_calls"}; writes the agent's final messages to MESSAGES_OUT.
"""

import json
import re
import sys
from pathlib import Path

import yaml
from minisweagent import config as msa_config
from minisweagent.agents.default import DefaultAgent
from minisweagent.models.litellm_model import LitellmModel

OBSERVATION = re.compile(r"^<returncode>(-?\d+)</returncode>\s*<output>\n?(.*)</output>\s*$", re.DOTALL)
BLOCK = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


class RecordedEnvironment:
    """Answers the k-th command with the k-th recorded output."""

    def __init__(self, messages):
        self.outputs = []
        self.submission = ""
        for i, m in enumerate(messages):
            if m["role"] != "assistant" or len(BLOCK.findall(m["content"] or "")) != 1:
                continue
            following = messages[i + 1]["content"] if i + 1 < len(messages) else ""
            found = OBSERVATION.match(following or "")
            if found:
                self.outputs.append({"output": found.group(2), "returncode": int(found.group(1))})
            else:
                self.outputs.append({"output": following or "", "returncode": 0})
        self.submission = messages[-1]["content"] if messages[-1]["role"] in ("user", "exit") else ""

    def execute(self, command, cwd="", *, timeout=None):
        if SUBMIT in command:
            return {"output": SUBMIT + "\n" + self.submission, "returncode": 0}
        return self.outputs.pop(0) if self.outputs else {"output": "", "returncode": 0}

    def get_template_vars(self):
        return {"cwd": "/testbed", "timeout": 60}


def main():
    proxy, trace_path, out_path = sys.argv[1:4]
    trace = json.load(open(trace_path))["messages"]
    config = yaml.safe_load((Path(msa_config.__file__).parent / "extra" / "swebench.yaml").read_text())
    agent_config = config["agent"] | {"step_limit": 0, "cost_limit": 0}
    model = LitellmModel(
        model_name="openai/recorded",
        model_kwargs={"api_base": proxy + "/v1", "api_key": "sk-test", "temperature": 0.0},
        cost_tracking="ignore_errors",
    )
    agent = DefaultAgent(model, RecordedEnvironment(trace), **agent_config)
    recorded = trace[1]["content"]
    inner = re.search(r"Consider the following PR description:\n(.*?)\n</pr_description>", recorded, re.DOTALL)
    task = inner.group(1) if inner else recorded
    exit_status, _ = agent.run(task)
    Path(out_path).write_text(json.dumps(agent.messages))
    print(json.dumps({"exit_status": exit_status, "n_calls": model.n_calls}))


if __name__ == "__main__":
    main()
