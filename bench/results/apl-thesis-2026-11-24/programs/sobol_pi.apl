⍝ Benchmark Sobol MC π (thesis Table 3.1: N = 10,000; Tables 3.5/3.6: 10,000,000).
⍝ Point i of the 2-D Sobol sequence (16 bits, direct, not Gray-code order): the
⍝ first coordinate is the van der Corput sequence; the second XORs the direction
⍝ numbers of the primitive polynomial x+1 selected by the bits of i, an XOR written
⍝ as a sum modulo 2 (an inner product with the direction-bit matrix V).
⍝ bench:
K ← 16
V ← K K⍴ 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 1 1 0 0 1 1 0 0 0 0 0 0 0 0 0 0 1 0 1 0 1 0 1 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0 1 0 1 0 0 0 0 0 1 0 1 0 0 0 0 0 1 1 1 1 0 0 0 0 1 1 1 1 0 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0 1 0 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 1 0 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1
w ← ÷2*⍳K
bits ← {2|⌊⍵÷2*¯1+⍳K}
sobol1 ← {+/w×bits ⍵}
sobol2 ← {+/w×2|(bits ⍵)+.×V}
N ← 10000000
x ← sobol1¨ ⍳N
y ← sobol2¨ ⍳N
4×(+/1≥(x*2)+y*2)÷N
