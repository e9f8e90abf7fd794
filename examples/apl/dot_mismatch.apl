⍝ T18: extents that differ at run time (a compress has no static length).
+/ (⍳3) × 1 0 1 1 1/⍳5
⍝ ==
⍝ error: size
