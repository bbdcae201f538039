"""The ordered list of views.

The window, the session file, the export menu and the headless CLI all walk
``VIEWS``; adding a view is one model module, one widget module and one line
here.  Widgets are named by import path so that reading the registry (for
``export --help``, or a session) imports no Qt.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from gui.model.attention import AttentionModel
from gui.model.base import ViewModel
from gui.model.benchmark import BenchmarkModel
from gui.model.calculator import CalculatorModel
from gui.model.gradients import GradientsModel
from gui.model.learning import LearningModel
from gui.model.logdomain import LogDomainModel
from gui.model.normalizers import NormalizersModel
from gui.model.online import OnlineModel
from gui.model.precision import PrecisionModel
from gui.model.sampling import SamplingModel
from gui.model.simplex import SimplexModel
from gui.model.temperature import TemperatureModel
from gui.model.texts import tr
from gui.model.variants import VariantsModel


@dataclass(frozen=True)
class ViewSpec:
    name: str
    model: type[ViewModel]
    widget_path: str  # "module:Class"

    @property
    def title(self) -> str:
        return tr(f"view.{self.name}.title")

    def widget_class(self):
        module, _, cls = self.widget_path.partition(":")
        return getattr(importlib.import_module(module), cls)


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("calculator", CalculatorModel, "gui.views.calculator:CalculatorView"),
    ViewSpec("temperature", TemperatureModel, "gui.views.temperature:TemperatureView"),
    ViewSpec("normalizers", NormalizersModel, "gui.views.normalizers:NormalizersView"),
    ViewSpec("simplex", SimplexModel, "gui.views.simplex:SimplexView"),
    ViewSpec("gradients", GradientsModel, "gui.views.gradients:GradientsView"),
    ViewSpec("precision", PrecisionModel, "gui.views.precision:PrecisionView"),
    ViewSpec("log-domain", LogDomainModel, "gui.views.logdomain:LogDomainView"),
    ViewSpec("attention", AttentionModel, "gui.views.attention:AttentionView"),
    ViewSpec("sampling", SamplingModel, "gui.views.sampling:SamplingView"),
    ViewSpec("online", OnlineModel, "gui.views.online:OnlineView"),
    ViewSpec("variants", VariantsModel, "gui.views.variants:VariantsView"),
    ViewSpec("learning", LearningModel, "gui.views.learning:LearningView"),
    ViewSpec("benchmark", BenchmarkModel, "gui.views.benchmark:BenchmarkView"),
)


def get(name: str) -> ViewSpec:
    for spec in VIEWS:
        if spec.name == name:
            return spec
    raise KeyError(name)
