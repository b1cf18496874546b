"""DAgger warm start of CONFIG with --seed S (train.bc has no seed flag)."""
import sys
from dataclasses import replace
from pathlib import Path
from train.bc import pretrain
from train.config import load_config
cfg = load_config(sys.argv[1])
cfg = replace(cfg, ppo=replace(cfg.ppo, seed=int(sys.argv[3])))
print(pretrain(cfg, Path(sys.argv[2])))
