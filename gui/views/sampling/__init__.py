"""The Sampling view (``gui.views.sampling:SamplingView`` in the registry).

One module per part: ``controls`` (the control column, from the model's
parameter metadata), ``bars`` (the token bars and the bar kinds, whose
hover names the knob that cut a token), ``curves`` (the cumulative plot
and the T and τ curves), ``draws`` (observed against expected counts, the
readouts, the progress row), ``gumbel`` and ``router`` (their tabs) and
``view`` (the view, which only builds and wires them).
"""

from gui.views.sampling.view import SamplingView

__all__ = ["SamplingView"]
