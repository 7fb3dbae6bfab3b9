using System;

namespace Shipyard.Billing
{
    /// <summary>An amount of money.</summary>
    public class Money
    {
        public decimal Amount { get; }

        public Money(decimal amount)
        {
            Amount = amount;
        }

        /// <summary>Splits into equal parts.</summary>
        public Money[] Allocate(int parts)
        {
            var result = new Money[parts];
            for (var i = 0; i < parts; i++) result[i] = new Money(Amount / parts);
            return result;
        }
    }
}
