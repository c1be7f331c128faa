"""Task generators, grouped by kind; importing this package registers them all."""
from stackparse.tasks.base import TASKS, Example, Protocol, Task, concatenate, get_task, register
from stackparse.tasks import algorithmic  # noqa: F401  (registers the Joulin & Mikolov tasks)
from stackparse.tasks import transduction  # noqa: F401  (registers the Grefenstette et al. tasks)
from stackparse.tasks import grammar  # noqa: F401  (registers the NSPDA paper's languages, pda-NAME)

__all__ = ["TASKS", "Example", "Protocol", "Task", "concatenate", "get_task", "register"]
