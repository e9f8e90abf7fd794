⍝ Benchmark HotSpot (Rodinia; thesis Table 3.1: 512×512 grid, 360 iterations; Table
⍝ 3.5: 1024×1024). One explicit step of the chip-temperature equation per
⍝ iteration: each cell moves towards its four neighbours (edges replicated), its
⍝ power input and the ambient temperature 80. The coefficients are fixed (Rodinia
⍝ derives them from the chip's dimensions). The value is the mean temperature.
⍝ bench:
M ← 1024
I ← 360
T ← 300+0.1×(⍳M)∘.×⍳M
P ← 0.01×7|(⍳M)∘.+2×⍳M
step ← {
  up ← (1↑⍵)⍪¯1↓⍵
  down ← (1↓⍵)⍪¯1↑⍵
  left ← ⍉(1↑⍉⍵)⍪¯1↓⍉⍵
  right ← ⍉(1↓⍉⍵)⍪¯1↑⍉⍵
  ⍵+0.2×P+(0.1×up+down-2×⍵)+(0.1×left+right-2×⍵)+0.01×80-⍵
}
(+/+/step⍣I ⊢ T)÷M×M
