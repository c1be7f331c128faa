"""The shared trainer and the objectives that connect it to tasks and models."""
from stackparse.training.trainer import Objective, TrainConfig, Trainer, TrainResult

__all__ = ["Objective", "TrainConfig", "Trainer", "TrainResult"]
