⍝ Benchmark Black-Scholes (thesis Table 3.1: N = 100,000; Tables 3.5/3.6: 10,000 and
⍝ 10,000,000). Prices N European call options whose spot price runs from 50 to 70;
⍝ the value is the sum of the prices. The cumulative normal distribution uses the
⍝ Abramowitz–Stegun polynomial, an inner product per option (a nested reduce).
⍝ bench:
cnd ← {
  l ← |⍵
  k ← ÷1+0.2316419×l
  p ← 0.31938153 ¯0.356563782 1.781477937 ¯1.821255978 1.330274429 +.× k*⍳5
  w ← 1-p×(*-(l×l)÷2)÷(2×○1)*0.5
  (w×⍵≥0)+(1-w)×⍵<0
}
call ← {
  S ← ⍵ ⋄ X ← 65 ⋄ T ← 1 ⋄ r ← 0.1 ⋄ v ← 0.2
  d1 ← ((⍟S÷X)+(r+(v*2)÷2)×T)÷v×T*0.5
  d2 ← d1-v×T*0.5
  (S×cnd d1)-(X×*-r×T)×cnd d2
}
N ← 10000000
+/ call¨ 50+20×(⍳N)÷N
