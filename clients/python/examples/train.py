# A training loop that checkpoints when gpucloud asks (SIGUSR1) and resumes where it left off.
# With PyTorch, `state` is {"model": model.state_dict(), "optim": optim.state_dict(), "step": step}
# and torch.save / torch.load take the place of json.dump / json.load.
import json, os, time
from gpucloud import checkpoint

checkpoint.install()                              # first: SIGUSR1 would otherwise end the process
state = {"step": 0, "loss": 10.0}
if checkpoint.resume_from():                      # a resumed run: its latest checkpoint
    with open(checkpoint.resume_from()) as f:
        state = json.load(f)
steps = int(os.environ.get("STEPS", "1000"))
print("training from step", state["step"], flush=True)
while state["step"] < steps:
    state["loss"] *= 0.99                         # loss.backward(); optim.step()
    state["step"] += 1
    time.sleep(float(os.environ.get("STEP_SECONDS", "0.01")))
    if checkpoint.due():                          # gpucloud asked: save, then say where
        path = os.path.join(checkpoint.directory() or ".", "step-%d.json" % state["step"])
        with open(path, "w") as f:
            json.dump(state, f)
        checkpoint.saved(path)
        print("checkpoint saved at", path, flush=True)
print("done at step", state["step"], "loss %.4f" % state["loss"], flush=True)
