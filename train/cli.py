"""``xfer train CONFIG``: train the PPO stream policy in the simulator and evaluate it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from train.evaluate import DEFAULT_SWEEP, parse_counts  # light: click and the stdlib only


@click.command("train")
@click.argument("config", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="runs/train",
    show_default=True,
    help="Directory for policy.pt, progress.csv and eval.json.",
)
@click.option("--seed", type=int, default=None, help="Override [ppo] seed.")
@click.option("--timesteps", type=int, default=None, help="Override [ppo] total_timesteps.")
@click.option(
    "--eval/--no-eval",
    "do_eval",
    default=True,
    show_default=True,
    help="Evaluate the trained policy on held-out simulated networks.",
)
@click.option(
    "--finetune",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Fine-tune this checkpoint instead of training from scratch (needs --live).",
)
@click.option(
    "--save-every",
    type=int,
    default=0,
    show_default=True,
    help="Also export policy_<steps>.pt every this many steps (0: only at the end).",
)
@click.option(
    "--init",
    "init",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Continue training (in simulation) from this checkpoint's weights.",
)
@click.option("--live", default=None, help="Testbed scenario for live fine-tuning.")
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="ADDRESS",
    help="Run the environments as Ray workers: a cluster address (auto, ray://host:10001), "
    "or --ray alone for an embedded local Ray.",
)
@click.option("--ray-workers", default=2, show_default=True, help="Environment actors with --ray.")
@click.option("--episodes", default=50, show_default=True, help="--live: training episodes.")
@click.option("--episode-mi", default=20, show_default=True, help="--live: MIs per episode.")
@click.option(
    "--lr",
    default=1e-4,
    show_default=True,
    help="--live: learning rate (1e-4 moved the policy in 50 episodes; 1e-5 barely did).",
)
@click.option("--epochs", default=10, show_default=True, help="--live: PPO epochs per episode.")
@click.option(
    "--random-start",
    default=0.4,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="--live: fraction of training episodes started at a random stream count.",
)
@click.option(
    "--eval-every", default=0, show_default=True, help="--live: greedy episode every N (0: none)."
)
@click.option(
    "--ustar-sweep",
    default=",".join(map(str, DEFAULT_SWEEP)),
    show_default=True,
    help="--live: fixed stream counts measured to find U* (the best fixed N's utility).",
)
@click.option(
    "--ustar-seconds", default=8.0, show_default=True, help="--live: seconds per U* sweep run."
)
@click.option("--ustar", type=float, default=None, help="--live: give U* instead of measuring it.")
@click.option(
    "--reward",
    type=click.Choice(["ratio", "paper"]),
    default="ratio",
    show_default=True,
    help="--live: U/U* per MI, or the sign of the change of U.",
)
@click.option(
    "--max-streams", default=64, show_default=True, help="--live: sender's --max-streams."
)
def train_cmd(
    config: str | None, out_dir: str, seed: int | None, timesteps: int | None,
    do_eval: bool, finetune: str | None, save_every: int, init: str | None, live: str | None,
    ray_address: str | None, ray_workers: int, **live_opts: Any,
) -> None:  # fmt: skip
    """Train the PPO stream policy on the simulator (CONFIG: configs/train/*.toml), or
    fine-tune a checkpoint on a live testbed scenario (--finetune CKPT --live SCENARIO)."""
    if finetune or live:
        _finetune(finetune, live, out_dir, seed, live_opts)
        return
    from train.config import load_config
    from train.trainer import train

    try:
        cfg = load_config(config, seed=seed, total_timesteps=timesteps)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    if init is not None:  # before any work: an ensemble bundle or a non-policy file says so now
        from policy.ppo import read_checkpoint

        try:
            read_checkpoint(init)
        except ValueError as exc:
            raise click.ClickException(f"--init: {exc}") from exc
    out = Path(out_dir)
    click.echo(
        f"training {cfg.model.kind} for {cfg.ppo.total_timesteps} MIs, seed {cfg.ppo.seed} -> {out}"
    )
    if init is None and cfg.warm_start == "dagger":
        from train.bc import pretrain

        out.mkdir(parents=True, exist_ok=True)
        click.echo("warm start: DAgger on the simulator's teacher")
        ws = pretrain(
            cfg,
            out / "warm_start.pt",
            cfg.dagger_rounds,
            cfg.dagger_steps,
            cfg.dagger_envs,
            click.echo,
        )
        click.echo(f"warm start done in {ws['wall_seconds']} s wall, {ws['cpu_seconds']} s CPU")
        init = str(out / "warm_start.pt")
    if ray_address is not None:
        from train.ray_scale import RayConfig, train_on_ray

        rc = RayConfig(address=None if ray_address == "local" else ray_address, workers=ray_workers)
        _, meta = train_on_ray(cfg, out, rc, echo=click.echo, save_every=save_every, init=init)
    else:
        _, meta = train(cfg, out, echo=click.echo, save_every=save_every, init=init)
    click.echo(
        f"trained in {meta['train_seconds']} s wall, {meta['train_cpu_seconds']} s CPU; checkpoint {out / 'policy.pt'}"
    )
    if do_eval:
        from train.simeval import evaluate_checkpoint, format_table

        t0 = time.monotonic()
        result = evaluate_checkpoint(out / "policy.pt", cfg.eval_networks, cfg.eval_seed)
        (out / "eval.json").write_text(json.dumps(result, indent=2))
        click.echo(format_table(result))
        click.echo(f"evaluated in {time.monotonic() - t0:.0f} s -> {out / 'eval.json'}")


def _finetune(
    checkpoint: str | None, live: str | None, out_dir: str, seed: int | None, o: dict[str, Any]
) -> None:
    """``--finetune CKPT --live SCENARIO``: PPO on a real transfer (train/finetune.py)."""
    if not (checkpoint and live):
        raise click.UsageError("--finetune CKPT and --live SCENARIO go together")
    sweep = parse_counts(o["ustar_sweep"])
    from testbeds import TestbedError
    from train.finetune import FinetuneConfig, finetune
    from train.live import LiveEnvError

    fc = FinetuneConfig(
        checkpoint=checkpoint, scenario=live, out_dir=out_dir, episodes=o["episodes"],
        episode_mi=o["episode_mi"], learning_rate=o["lr"], n_epochs=o["epochs"],
        eval_every=o["eval_every"], random_start=o["random_start"], seed=seed or 0, reward=o["reward"], u_star=o["ustar"],
        ustar_sweep=sweep, ustar_seconds=o["ustar_seconds"], max_streams=o["max_streams"],
    )  # fmt: skip

    def echo(msg: str) -> None:
        click.echo(msg, err=True)

    try:
        summary = finetune(fc, echo)
    except (ValueError, LiveEnvError, TestbedError) as exc:
        raise click.ClickException(str(exc)) from exc
    except KeyboardInterrupt:
        raise click.ClickException(
            f"interrupted; {Path(out_dir) / 'policy.pt'} holds the last finished episode"
        ) from None
    echo(
        f"finetune: {fc.episodes} episodes in {summary['wall_seconds']} s; "
        f"checkpoint {Path(out_dir) / 'policy.pt'} (use --policy ppo:{Path(out_dir) / 'policy.pt'})"
    )
