module Shipyard.Text (splitOn, Pair (..)) where

import Data.List (isPrefixOf)

-- | Splits a list wherever the separator occurs.
splitOn :: Eq a => [a] -> [a] -> [[a]]
splitOn _ [] = [[]]
splitOn sep xs
  | sep `isPrefixOf` xs = [] : splitOn sep (drop (length sep) xs)
  | otherwise = case splitOn sep (tail xs) of
      (w : ws) -> (head xs : w) : ws
      [] -> [[head xs]]

-- | Counts the words of a line.
wordCount :: String -> Int
wordCount "" = 0
wordCount line = length (words line)

data Pair a = Pair a a
  deriving (Show, Eq)

-- | Things that can be rendered.
class Render a where
  render :: a -> String
  renderAll :: [a] -> String
  renderAll = concatMap render

instance Render (Pair a) where
  render _ = "pair"
