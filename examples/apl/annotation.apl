⍝ T22 (§3.3): a type annotation in a comment, checked at each application. diff takes
⍝ a non-empty vector and returns one element less.
diff ← {
  ⍝: <κ>(ρ+1) → <κ>ρ
  1↓⍵-¯1⌽⍵
}
diff 3 1 4 1 5
⍝ ==
⍝ output { [-2i64, 3i64, -3i64, 4i64] }
