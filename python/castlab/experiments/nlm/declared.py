"""NLM's open settings, declared once for every NLM experiment: a leaf the figures import, so the
package and its figures do not import each other. The first reading of each is the primary; a
claim holds only when it holds under every reading (the accounting rule, ``castlab.claims``).

- The sources' packet times: the paper's sources are "CBR" and nothing more, so jittered and
  periodic packet times are both readings it allows, the same for every source of a figure
  (layers, NLM senders, cross traffic). Primary: jittered (castlab's sources by default).
- Figure 8's second router: an LMR, as the paper's "each LMR" reads (primary), or a plain
  router: :data:`LMR2_READINGS`, fig11 and fig13 (``figures``).
"""

from __future__ import annotations

SOURCE_READINGS = {"jittered sources": {"jitter": True}, "periodic sources": {"jitter": False}}
SOURCE_SETTING = "the sources' packet times"
LMR2_SETTING = "Figure 8's second router"
LMR2_READINGS = ("LMR2 an LMR", "LMR2 plain")
