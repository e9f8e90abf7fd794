⍝ T22: diff applied to an empty vector is a static type error: <κ>0 is not <κ>(ρ+1).
diff ← {
  ⍝: <κ>(ρ+1) → <κ>ρ
  1↓⍵-¯1⌽⍵
}
diff 0↑1 2 3
⍝ ==
⍝ error: needs `⍵` of type <κ>(ρ+1)
