"""The Online-softmax view (``gui.views.online:OnlineView`` in the registry).

One module per part: ``row_plots`` (the row, the running m and d, the merge
tree, the result beside softmax), ``attention_plots`` (the tile heatmaps,
the running m and l per query row, the rescale factors), ``readouts`` (this
step's readouts and the passes over memory) and ``view`` (the view, which
only builds and wires them).  The transport (play, step, speed) is the
shared :class:`gui.widgets.transport.Transport`.
"""

from gui.views.online.view import OnlineView

__all__ = ["OnlineView"]
