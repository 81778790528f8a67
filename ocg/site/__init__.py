"""The report website: the landing page (site), the case browser, the caveats and explanations
beside the numbers, and results.json. Above analysis: it shows the paper's tables and figures."""
