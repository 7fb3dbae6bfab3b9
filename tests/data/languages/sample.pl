package Shipyard::Queue;
use strict;
use warnings;

# Creates an empty queue.
sub new {
    my ($class) = @_;
    return bless { items => [] }, $class;
}

sub push_item {
    my ($self, $item) = @_;
    push @{ $self->{items} }, $item;
    return $self;
}

package Shipyard::Stack {
    # An empty stack.
    sub new { return bless [], shift }

    sub peek {
        my ($self) = @_;
        return $self->[-1];
    }

    sub push_item {
        my ($self, $item) = @_;
        push @$self, $item;
    }
}

1;
